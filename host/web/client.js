// Transport: unary RPC over POST /api/<method> and the SSE frame stream of
// GET /events (the page's stream of every frame), read with streaming fetch
// and reconnected with backoff.
import { Frame } from './vocabulary.js';

const RPC_DEADLINE_MS = 30_000;

// TOKEN is the server's bearer token: the address serve prints carries it
// as #token=…, and the tab keeps it for reloads. A page on the server's
// own machine needs none.
const TOKEN = (() => {
  const given = new URLSearchParams(location.hash.slice(1)).get('token');
  if (given) sessionStorage.setItem('dsh-actors-token', given);
  return given ?? sessionStorage.getItem('dsh-actors-token');
})();

// withToken adds the Authorization header when the page has a token.
function withToken(headers) {
  return TOKEN ? { ...headers, authorization: `Bearer ${TOKEN}` } : headers;
}

function newRpcId() {
  if (crypto.randomUUID) return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

// transportFailure is a failure to reach the server or read its answer:
// code internal, marked details.transport for the page's wording.
function transportFailure(error) {
  return { ok: false, error: { code: 'internal', message: String(error?.message ?? error), details: { transport: true } } };
}

// rpc calls method and resolves to its result {ok, value} | {ok:false, error};
// transport failures (network, non-2xx, a wrong rpcId echo) fold into an
// internal error. It never rejects.
export async function rpc(method, payload) {
  const rpcId = newRpcId();
  try {
    const response = await fetch(`/api/${method}`, {
      method: 'POST',
      headers: withToken({ 'content-type': 'application/json' }),
      body: JSON.stringify({ type: 'client-request', rpcId, method, payload }),
      signal: AbortSignal.timeout(RPC_DEADLINE_MS),
    });
    if (!response.ok) throw new Error(`HTTP ${response.status}: ${await response.text()}`);
    const body = await response.json();
    if (body.type !== 'server-response' || body.rpcId !== rpcId) throw new Error('rpcId echo mismatch');
    return body.result;
  } catch (error) {
    return transportFailure(error);
  }
}

// backoffDelay is the jittered exponential reconnect delay for attempt n ≥ 1:
// cap = min(10 s, 500 ms · 2^(n−1)), delay uniformly in [cap/2, cap].
export function backoffDelay(attempt) {
  const cap = Math.min(10_000, 500 * 2 ** (attempt - 1));
  return cap / 2 + Math.random() * (cap / 2);
}

// parseBlock turns one SSE block into a frame payload, or null for comments
// and malformed or mismatched envelopes.
function parseBlock(block) {
  const data = block
    .split('\n')
    .filter((line) => line.startsWith('data: '))
    .map((line) => line.slice(6))
    .join('\n');
  if (!data) return null;
  try {
    const envelope = JSON.parse(data);
    const frame = envelope.payload;
    if (envelope.type !== 'server-request' || !frame || frame.type !== envelope.method) throw new Error('bad envelope');
    return frame;
  } catch (error) {
    console.error('dropping malformed frame', error);
    return null;
  }
}

// readFrames feeds every frame of one open stream to onFrame until it ends.
async function readFrames(body, onFrame) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let cut;
    while ((cut = buffer.indexOf('\n\n')) >= 0) {
      const frame = parseBlock(buffer.slice(0, cut));
      buffer = buffer.slice(cut + 2);
      if (frame?.type === Frame.streamError) throw new Error(frame.error?.message ?? 'stream error');
      if (frame) onFrame(frame);
    }
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// streamEvents keeps the frame stream open forever: onState('connected')
// each time the stream opens (the caller re-pulls what it shows), then
// frames in order; on loss onState('reconnecting') and a backoff wait.
export async function streamEvents(onFrame, onState) {
  for (let attempt = 0; ; ) {
    try {
      const response = await fetch('/events', { headers: withToken({ accept: 'text/event-stream' }), cache: 'no-store' });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      attempt = 0;
      onState('connected');
      await readFrames(response.body, onFrame);
    } catch (error) {
      console.warn('event stream lost', error);
    }
    attempt += 1;
    onState('reconnecting');
    await sleep(backoffDelay(attempt));
  }
}
