// User-visible strings in Chinese (the seed's product copy, web-host §4.5)
// and English, chosen from ?lang=… or the browser's language.

const strings = {
  zh: {
    'app.sessions': '会话',
    'app.newSession': '新建会话',
    'app.noSessions': '还没有会话',
    'app.pick': '选择或新建一个会话',
    'app.untitled': '新会话',
    'conn.connecting': '正在连接…',
    'conn.connected': '已连接',
    'conn.reconnecting': '连接中断，正在重新连接…',
    'diagnostic.corrupt': '会话记录损坏',
    'diagnostic.unsupported': '子代理记录版本不受支持',
    'diagnostic.unavailable': '会话记录无法读取',
    'loading.label': '正在加载子代理…',
    'load.error': '无法加载子代理',
    retry: '重试',
    'mode.continuable': '可继续',
    'state.running': '正在处理',  // seed 004: running / inactive shown as 正在处理 / 已完成
    'state.stored': '已完成',
    'state.idle': '在线空闲',
    'state.live': '在线',
    'state.failed': '失败',
    'state.stopped': '已停止',
    'state.cut': '已中断',
    'outcome.failed': '本轮失败',
    'outcome.stopped': '本轮已停止',
    'outcome.cut': '本轮被中断：{why}',
    'outcome.retry': '重试这条消息',
    'cut.interrupted': '进程在本轮结束前退出',
    'cut.max-tokens': '达到模型输出上限',
    'cut.refusal': '模型拒绝回答',
    'cut.blocked': '被拦截',
    'cut.disposed': '会话已关闭',
    'composer.stop': '停止生成',
    'oneshot.title': '一次性子代理记录',
    'oneshot.body': '一次性任务不支持后续消息，可在这里查看完整执行记录。',
    'unreadable.title': '此子代理无法接收消息',
    'unreadable.body': '它的记录无法读取（{why}），因此不能继续；上面是能读出的部分。',
    'sidebar.children': '显示子会话',
    'sidebar.childOf': '{parent} 的子会话',
    'damage.title': '会话记录损坏',
    'damage.body': '第 {line} 行之后的记录无法读取：{damage}。上面是能读出的部分。',
    'damage.bodyAfter': '上面显示的部分之后的记录无法读取：{damage}。',
    'branch.expand': '展开 {label} 的下级子代理',
    'branch.collapse': '收起 {label} 的下级子代理',
    'count.one': '{count} 个子代理',
    'count.other': '{count} 个子代理',
    'tree.aria': '子代理会话',
    'readonly.title': '此子代理暂时只读',
    'readonly.body': '只有父会话正在运行时才能给它的子代理发消息。让父会话重新运行（例如给它发一条消息）后即可在这里继续。',
    'readonly.nested': '只有父会话正在运行时才能给它的子代理发消息。它的父会话本身也是子代理：先让最上层会话重新运行（例如给它发一条消息），再从父会话继续，然后回到这里。',
    'readonly.openParent': '打开父会话',
    'composer.offline': '与服务器的连接已断开，恢复连接后才能发送消息。',
    'path.label': '父会话路径',
    'sessions.error': '无法加载会话列表',
    'start.title': '如何开始',
    'start.body': '点击“新建会话”，然后给智能体发消息。未配置模型时这里运行的是脚本智能体，它逐行执行命令：',
    'start.spawn': '创建一个名为 researcher 的子代理，并让它回复',
    'start.reply': '直接回复一段文字',
    'start.model': '如果服务器配置了模型，直接用自然语言写即可。',
    'error.transport': '无法连接服务器',
    'error.unknown': '出现错误',
    'error.bad-request': '请求无效',
    'error.cancelled': '操作已取消',
    'error.session-not-found': '找不到该会话',
    'error.session-conflict': '该会话已在另一个工作目录中打开',
    'error.model-unavailable': '模型不可用',
    'error.agent-busy': '智能体正忙',
    'error.subagent-parent-unavailable': '父会话当前没有在运行',
    'error.subagent-not-found': '找不到该子代理',
    'error.subagent-catalog-diagnostic': '子代理记录无法读取',
    'error.subagent-not-resumable': '该子代理无法继续',
    'error.subagent-unauthorized': '无权给该子代理发消息',
    'error.subagent-not-delivered': '消息没有送达子代理',
    'error.internal': '服务器内部错误',
    'error.session-log-corrupt': '会话记录损坏',
    'composer.placeholder': '给智能体发消息',
    'composer.unavailable': '会话不可用',
    'composer.send': '发送消息',
    'transcript.loadOlder': '加载更早的消息',
    'transcript.empty': '还没有消息',
    'transcript.you': '你',
    'transcript.parent': '父代理',
    'transcript.agent': '智能体',
    'transcript.turnEnded': '本轮结束：{kind}',
    'transcript.retrying': '第 {n} 次重试（最多 {max} 次），{ms} 毫秒后：{why}',
    'transcript.retryingUnbounded': '第 {n} 次重试，{ms} 毫秒后：{why}',
    'transcript.tool': '工具 {name}',
    'transcript.toolRunning': '运行中',
    'transcript.toolDone': '完成',
    'transcript.toolFailed': '出错',
    'time.now': '刚刚',
    'time.minutes': '{n}分钟',
    'time.hours': '{n}小时',
    'time.days': '{n}天',
    'time.months': '{n}个月',
    'time.years': '{n}年',
    'search.label': '搜索会话',
    'search.placeholder': '搜索会话内容',
    'search.results': '搜索结果',
    'search.searching': '正在搜索…',
    'search.count.one': '找到 {count} 条结果',
    'search.count.other': '找到 {count} 条结果',
    'search.some': '已显示 {count} 条结果，还有更多',
    'search.none': '没有找到“{query}”',
    'search.more': '加载更多结果',
    'search.error': '搜索失败',
    'search.tool': '工具',
    'search.turn': '本轮',
  },
  en: {
    'app.sessions': 'Sessions',
    'app.newSession': 'New session',
    'app.noSessions': 'No sessions yet',
    'app.pick': 'Select or create a session',
    'app.untitled': 'New session',
    'conn.connecting': 'Connecting…',
    'conn.connected': 'Connected',
    'conn.reconnecting': 'Connection lost, reconnecting…',
    'diagnostic.corrupt': 'corrupted session record',
    'diagnostic.unsupported': 'unsupported subagent record version',
    'diagnostic.unavailable': 'session record unreadable',
    'loading.label': 'Loading subagents…',
    'load.error': 'Unable to load subagents',
    retry: 'Retry',
    'mode.continuable': 'continuable',
    'state.running': 'running',
    'state.stored': 'inactive',
    'state.idle': 'live, idle',
    'state.live': 'live',
    'state.failed': 'failed',
    'state.stopped': 'stopped',
    'state.cut': 'cut off',
    'outcome.failed': 'This turn failed',
    'outcome.stopped': 'This turn was stopped',
    'outcome.cut': 'This turn was cut off: {why}',
    'outcome.retry': 'Retry this message',
    'cut.interrupted': 'the process ended before the turn did',
    'cut.max-tokens': 'the model reached its output limit',
    'cut.refusal': 'the model refused',
    'cut.blocked': 'blocked',
    'cut.disposed': 'the session was closed',
    'composer.stop': 'Stop generating',
    'oneshot.title': 'One-shot subagent record',
    'oneshot.body': 'One-shot tasks do not accept follow-ups; review the full execution record here.',
    'unreadable.title': 'This subagent cannot take messages',
    'unreadable.body': 'Its record cannot be read ({why}), so it cannot continue; what could be read is shown above.',
    'sidebar.children': 'Show child sessions',
    'sidebar.childOf': 'child of {parent}',
    'damage.title': 'Damaged session record',
    'damage.body': 'The record cannot be read from line {line} on: {damage}. What could be read is shown above.',
    'damage.bodyAfter': 'The record cannot be read past what is shown above: {damage}.',
    'branch.expand': 'Expand {label} descendants',
    'branch.collapse': 'Collapse {label} descendants',
    'count.one': '{count} subagent',
    'count.other': '{count} subagents',
    'tree.aria': 'Subagent sessions',
    'readonly.title': 'This subagent is read-only for now',
    'readonly.body': 'A subagent takes messages only while its parent session is running. Get the parent running again (for example, send it a message), then continue here.',
    'readonly.nested': 'A subagent takes messages only while its parent session is running, and this parent is itself a subagent: get the top-level session running again (for example, send it a message), continue from the parent, then come back here.',
    'readonly.openParent': 'Open the parent session',
    'composer.offline': 'Not connected to the server; you can send again once the connection is back.',
    'path.label': 'Parent sessions',
    'sessions.error': 'Unable to load the sessions',
    'start.title': 'How to start',
    'start.body': 'Click “New session”, then message the agent. Without a configured model it is the scripted agent, which runs one command per line:',
    'start.spawn': 'starts a subagent named researcher and has it reply',
    'start.reply': 'replies with the text',
    'start.model': 'When the server has a model configured, just write in plain language.',
    'error.transport': 'Cannot reach the server',
    'error.unknown': 'Something went wrong',
    'error.bad-request': 'The request was invalid',
    'error.cancelled': 'The operation was cancelled',
    'error.session-not-found': 'Session not found',
    'error.session-conflict': 'The session is open in another working directory',
    'error.model-unavailable': 'The model is unavailable',
    'error.agent-busy': 'The agent is busy',
    'error.subagent-parent-unavailable': 'The parent session is not running',
    'error.subagent-not-found': 'Subagent not found',
    'error.subagent-catalog-diagnostic': 'The subagent record cannot be read',
    'error.subagent-not-resumable': 'This subagent cannot continue',
    'error.subagent-unauthorized': 'Not allowed to message this subagent',
    'error.subagent-not-delivered': 'The message was not delivered to the subagent',
    'error.internal': 'Internal server error',
    'error.session-log-corrupt': 'The session record is damaged',
    'composer.placeholder': 'Message the agent',
    'composer.unavailable': 'Session unavailable',
    'composer.send': 'Send message',
    'transcript.loadOlder': 'Load older messages',
    'transcript.empty': 'No messages yet',
    'transcript.you': 'You',
    'transcript.parent': 'Parent agent',
    'transcript.agent': 'Agent',
    'transcript.turnEnded': 'Turn ended: {kind}',
    'transcript.retrying': 'Retry {n} of {max} in {ms} ms: {why}',
    'transcript.retryingUnbounded': 'Retry {n} in {ms} ms: {why}',
    'transcript.tool': 'Tool {name}',
    'transcript.toolRunning': 'running',
    'transcript.toolDone': 'done',
    'transcript.toolFailed': 'failed',
    'time.now': 'just now',
    'time.minutes': '{n} min',
    'time.hours': '{n} h',
    'time.days': '{n} d',
    'time.months': '{n} mo',
    'time.years': '{n} y',
    'search.label': 'Search sessions',
    'search.placeholder': 'Search the conversations',
    'search.results': 'Search results',
    'search.searching': 'Searching…',
    'search.count.one': '{count} result',
    'search.count.other': '{count} results',
    'search.some': 'Showing {count} results, more available',
    'search.none': 'Nothing found for “{query}”',
    'search.more': 'Load more results',
    'search.error': 'Search failed',
    'search.tool': 'Tool',
    'search.turn': 'Turn',
  },
};

function pickLanguage() {
  const forced = new URLSearchParams(location.search).get('lang');
  const preferred = forced || (navigator.languages && navigator.languages[0]) || navigator.language || 'en';
  return preferred.toLowerCase().startsWith('zh') ? 'zh' : 'en';
}

export const lang = pickLanguage();

// t returns the string for key with {name} placeholders filled from vars.
export function t(key, vars = {}) {
  const template = strings[lang][key] ?? strings.en[key] ?? key;
  return template.replace(/\{(\w+)\}/g, (_, name) => String(vars[name] ?? ''));
}

// describeError splits an RPC error {code, message, details} into the
// page-language text for its code and the server's own words, "code:
// message", kept as a detail. A transport failure (details.transport) has
// its own text.
export function describeError(error) {
  const code = error?.code ?? 'internal';
  const key = error?.details?.transport ? 'error.transport' : `error.${code}`;
  const known = strings.en[key] !== undefined;
  return { text: t(known ? key : 'error.unknown'), detail: error?.message ? `${code}: ${error.message}` : code };
}

// countLabel is the header action text: "{count} 个子代理" / "{count} subagents".
export function countLabel(count) {
  return t(count === 1 ? 'count.one' : 'count.other', { count });
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

// relativeTime renders now − updatedAt compactly; future times clamp to "now".
export function relativeTime(updatedAt, now = Date.now()) {
  const diff = Math.max(0, now - updatedAt);
  if (diff < MINUTE) return t('time.now');
  if (diff < HOUR) return t('time.minutes', { n: Math.floor(diff / MINUTE) });
  if (diff < DAY) return t('time.hours', { n: Math.floor(diff / HOUR) });
  if (diff < 30 * DAY) return t('time.days', { n: Math.floor(diff / DAY) });
  if (diff < 365 * DAY) return t('time.months', { n: Math.floor(diff / (30 * DAY)) });
  return t('time.years', { n: Math.floor(diff / (365 * DAY)) });
}
