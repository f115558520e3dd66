// The chat room: its last messages (the messages projection, one page from the end), refreshed
// as the room's events arrive, a box to say something and a countdown (POST /apps/chat/*).
import { command, element, onSubmit, eventTime, field, query } from '/console/api.js';

/** How many of the room's latest messages the page shows. */
const shown = 50;

export class ChatView {
  constructor() {
    onSubmit('chat-say-form', async () => {
      const input = document.getElementById('chat-text');
      const said = await this.command('say', { text: input.value });
      if (said) input.value = '';
    });
    onSubmit('chat-countdown-form', async () => {
      const input = document.getElementById('chat-countdown-text');
      const text = input.value;
      input.value = '';
      // The server records "3...", "2...", "1...", then the text, a second apart; they arrive
      // through the tail as they are recorded. A refusal gives the text back.
      if (!(await this.command('countdown', { text })) && !input.value) input.value = text;
    });
    document.getElementById('chat-room').addEventListener('change', () => this.refresh(0));
    onSubmit('chat-room-form', () => this.refresh(0));
  }

  get room() {
    return field('chat-room') || 'default';
  }

  /** The streams whose events change what the view shows. */
  get streams() {
    return [`chat-${this.room}`];
  }

  command(name, body) {
    const speaker = { user: field('chat-user') || 'console', room: this.room };
    return command('chat-error', `/apps/chat/${name}`, { ...speaker, ...body }, (position) => this.refresh(position));
  }

  /** Reads the room's latest messages, at least as recent as `position`. */
  async refresh(position) {
    const asked = this.room;
    const room = await query('messages', { room: asked, limit: String(shown) }, position);
    const rendered = JSON.stringify(room);
    // Dropped when another room was chosen meanwhile; not redrawn when nothing changed.
    if (asked !== this.room || rendered === this.rendered) return;
    this.rendered = rendered;
    const items = room.messages.map((message) => {
      const time = element('time', { dateTime: message.date, textContent: new Date(eventTime(message.date)).toLocaleTimeString() });
      if (message.user === null) return element('li', { className: 'system' }, message.text, time);
      return element('li', {}, element('span', { className: 'user', textContent: message.user }), message.text, time);
    });
    if (!items.length) items.push(element('li', { className: 'muted', textContent: 'No messages yet.' }));
    const list = document.getElementById('chat-messages');
    // Follow new messages only when the reader is at the bottom already.
    const atBottom = list.scrollHeight - list.scrollTop - list.clientHeight < 24;
    list.replaceChildren(...items);
    if (atBottom) list.scrollTop = list.scrollHeight;
    document.getElementById('chat-active').textContent =
      `${room.activeUsers} active in the last 5 minutes${room.active && room.active.length ? `: ${room.active.join(', ')}` : ''}`;
  }
}

/** The view as the console loads it (see the server's ConsoleView). */
export const view = {
  title: 'Chat',
  html: `
  <h2 id="chat-title">Chat</h2>
  <form class="controls" id="chat-room-form">
    <label>Room <input id="chat-room" value="default" autocomplete="off" required></label>
    <label>Your name <input id="chat-user" value="console" autocomplete="off" required></label>
    <span id="chat-active" class="muted" aria-live="polite"></span>
  </form>
  <ol id="chat-messages" class="messages" aria-label="Messages"></ol>
  <p id="chat-error" class="error" role="alert" hidden></p>
  <form id="chat-say-form" class="controls">
    <label class="grow">Message <input id="chat-text" autocomplete="off" required></label>
    <button type="submit">Say</button>
  </form>
  <form id="chat-countdown-form" class="controls">
    <label class="grow">Countdown to <input id="chat-countdown-text" autocomplete="off" required></label>
    <button type="submit">Count down</button>
  </form>
`,
  create: () => new ChatView(),
};
