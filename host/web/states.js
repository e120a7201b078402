// What a session or child is doing and how its last turn ended, as the
// sidebar, the heading and the tree show it: one state with its text in
// the page's language and a tone (the dot's colour; never the only cue).

import { t } from './i18n.js';
import { EventType, ReasonKind } from './vocabulary.js';

// outcomeOf reads a turn/end event's data as session.list's lastTurn
// {kind, cause?, message?, code?}; null for a completed turn. The failure
// is in whichever shape the log has: {message, code?}, {failure} or
// {error}.
export function outcomeOf(data) {
  const reason = data?.reason;
  if (!reason?.kind || reason.kind === ReasonKind.completed) return null;
  const failure = typeof reason.message === 'string' ? reason : reason.failure ?? reason.error ?? {};
  const outcome = { kind: reason.kind };
  if (reason.reason?.kind) outcome.cause = reason.reason.kind;
  if (failure.message) outcome.message = failure.message;
  if (failure.code) outcome.code = failure.code;
  return outcome;
}

// noteTurn keeps summary.lastTurn current from one of its live events: a
// turn that starts clears it, one that ends sets it.
export function noteTurn(summary, event) {
  if (event.type === EventType.turnStart) summary.lastTurn = null;
  else if (event.type === EventType.turnEnd) summary.lastTurn = outcomeOf(event.data);
}

// outcomeState names an outcome: failed (error), stopped (aborted) or cut
// (any other way a turn ends early).
export function outcomeState(outcome) {
  if (!outcome) return null;
  if (outcome.kind === ReasonKind.error) return 'failed';
  if (outcome.kind === ReasonKind.aborted) return 'stopped';
  return 'cut';
}

const tones = { running: 'running', idle: 'idle', stored: 'stored', failed: 'error', stopped: 'warning', cut: 'warning' };

// sessionState is {state, text, tone} for a session that is running, live
// and how its last turn ended: running while a turn runs; else the
// outcome of a last turn that did not complete (with "live" when it is);
// else idle (live) or stored (only in storage).
export function sessionState({ running, live, lastTurn }) {
  if (running) return describe('running');
  const outcome = outcomeState(lastTurn);
  if (outcome) {
    const text = live ? `${t(`state.${outcome}`)} · ${t('state.live')}` : t(`state.${outcome}`);
    return { state: outcome, text, tone: tones[outcome] };
  }
  return describe(live ? 'idle' : 'stored');
}

function describe(state) {
  return { state, text: t(`state.${state}`), tone: tones[state] };
}
