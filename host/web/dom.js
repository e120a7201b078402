// el creates an element with attributes and children (strings become text).
export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  node.append(...children);
  return node;
}

// errorContent is an error's text in the page's language followed by the
// server's code and message as a smaller detail ({text, detail} from
// describeError).
export function errorContent({ text, detail }) {
  return [el('span', { class: 'error-text' }, text), ' ', el('small', { class: 'error-detail' }, detail)];
}
