// The names the page reads events, kinds and frames by. Generated from
// internal/vocab's and package event's constants and the host's frame
// names by
// TestPageVocabularyIsPackageEvents (-update-vocabulary); do not edit.

export const EventType = Object.freeze({
  turnStart: 'turn/start',
  turnEnd: 'turn/end',
  stepStart: 'step/start',
  stepEnd: 'step/end',
  userMessage: 'user/message',
  assistantChunk: 'assistant/chunk',
  assistantMessage: 'assistant/message',
  toolCall: 'tool/call',
  toolResult: 'tool/result',
  requestHeader: 'request/header',
  requestContext: 'request/context',
  llmRetry: 'llm/retry',
  sessionEndSeed: 'session/end-seed',
  subagentDescriptor: 'subagent/descriptor',
  steeringMessage: 'steering/message',
  subagentStart: 'subagent/start',
  subagentEnd: 'subagent/end',
  subagentProviderAdded: 'subagent/provider-added',
  subagentProviderRemoved: 'subagent/provider-removed',
  requestHeaderDelta: 'request/header-delta',
  modeSet: 'mode/set',
});

export const ReasonKind = Object.freeze({
  completed: 'completed',
  aborted: 'aborted',
  disposed: 'disposed',
  maxTokens: 'max-tokens',
  refusal: 'refusal',
  error: 'error',
  interrupted: 'interrupted',
  blocked: 'blocked',
});

export const TriggerKind = Object.freeze({
  message: 'message',
  retry: 'retry',
  injection: 'injection',
});

export const BlockType = Object.freeze({
  text: 'text',
  reasoning: 'reasoning',
  toolCall: 'tool-call',
  toolResult: 'tool-result',
});

export const Role = Object.freeze({
  user: 'user',
  assistant: 'assistant',
  tool: 'tool',
});

export const SourceKind = Object.freeze({
  user: 'user',
  coordinator: 'coordinator',
  tool: 'tool',
  model: 'model',
});

export const ChunkType = Object.freeze({
  blockStart: 'block-start',
  textDelta: 'text-delta',
  reasoningDelta: 'reasoning-delta',
  toolCallDelta: 'tool-call-delta',
  blockEnd: 'block-end',
  usage: 'usage',
  finish: 'finish',
});

export const Frame = Object.freeze({
  agentError: 'host/agent-error',
  sessionAdded: 'host/session-added',
  sessionEvent: 'session/event',
  sessionQueue: 'session/queue',
  sessionRemoved: 'host/session-removed',
  sessionStatus: 'host/session-status',
  sessionSubscribed: 'session/subscribed',
  streamError: 'stream/error',
});
