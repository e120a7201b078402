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
    'diagnostic.unavailable': '会话记录暂不可用',
    'loading.label': '正在加载子代理…',
    'load.error': '无法加载子代理',
    retry: '重试',
    'mode.continuable': '可继续',
    'activity.running': '正在处理',  // seed 004: running / inactive shown as 正在处理 / 已完成
    'activity.inactive': '已完成',
    'branch.expand': '展开 {label} 的下级子代理',
    'branch.collapse': '收起 {label} 的下级子代理',
    'count.one': '{count} 个子代理',
    'count.other': '{count} 个子代理',
    'tree.aria': '子代理会话',
    'readonly.title': '此子代理暂时只读',
    'readonly.body': '父会话当前不在线，重新打开父会话后即可继续发送消息。',
    'composer.placeholder': '给智能体发消息',
    'composer.unavailable': '会话不可用',
    'composer.send': '发送消息',
    'transcript.loadOlder': '加载更早的消息',
    'transcript.empty': '还没有消息',
    'transcript.you': '你',
    'transcript.parent': '父代理',
    'transcript.agent': '智能体',
    'transcript.turnEnded': '本轮结束：{kind}',
    'time.now': '刚刚',
    'time.minutes': '{n}分钟',
    'time.hours': '{n}小时',
    'time.days': '{n}天',
    'time.months': '{n}个月',
    'time.years': '{n}年',
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
    'diagnostic.unavailable': 'session record temporarily unavailable',
    'loading.label': 'Loading subagents…',
    'load.error': 'Unable to load subagents',
    retry: 'Retry',
    'mode.continuable': 'continuable',
    'activity.running': 'running',
    'activity.inactive': 'inactive',
    'branch.expand': 'Expand {label} descendants',
    'branch.collapse': 'Collapse {label} descendants',
    'count.one': '{count} subagent',
    'count.other': '{count} subagents',
    'tree.aria': 'Subagent sessions',
    'readonly.title': 'This subagent is read-only for now',
    'readonly.body': 'The parent session is offline; reopen it to continue sending messages.',
    'composer.placeholder': 'Message the agent',
    'composer.unavailable': 'Session unavailable',
    'composer.send': 'Send message',
    'transcript.loadOlder': 'Load older messages',
    'transcript.empty': 'No messages yet',
    'transcript.you': 'You',
    'transcript.parent': 'Parent agent',
    'transcript.agent': 'Agent',
    'transcript.turnEnded': 'Turn ended: {kind}',
    'time.now': 'just now',
    'time.minutes': '{n} min',
    'time.hours': '{n} h',
    'time.days': '{n} d',
    'time.months': '{n} mo',
    'time.years': '{n} y',
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
