// The live tail of the log: `GET /subscribe` as Server-Sent Events, newest first, filtered by
// category and type, with pause and resume, and an event's data and metadata on a click. The
// browser's EventSource resumes a dropped connection with `Last-Event-ID`, so no event is
// missed; positions already shown are passed over, so none is shown twice.
import { element, ensureSession, eventTime } from './api.js';

/** How many events the tail keeps (the oldest go first). */
const kept = 500;

/** The category of a stream: its name up to the first '-' (the whole name when it has none). */
function category(stream) {
  const dash = stream.indexOf('-');
  return dash < 0 ? stream : stream.slice(0, dash);
}

export class Tail {
  /**
   * `onEvent(event, live)` hears every event as it arrives (`live` once caught up), paused or
   * not; `onConnection(state, text)` hears `connecting`, `live` and `down`.
   */
  constructor({ onEvent, onConnection }) {
    this.onEvent = onEvent;
    this.onConnection = onConnection;
    this.events = [];
    this.last = 0;
    this.shownThrough = 0;
    this.live = false;
    this.paused = false;
    this.waiting = 0;
    this.selected = null;
    this.categories = new Set();
    this.types = new Set();
    this.list = document.getElementById('tail');
    this.detail = document.getElementById('event-detail');
    this.categorySelect = document.getElementById('tail-category');
    this.typeSelect = document.getElementById('tail-type');
    this.pauseButton = document.getElementById('tail-pause');
    this.waitingNote = document.getElementById('tail-waiting');
    this.categorySelect.addEventListener('change', () => this.render());
    this.typeSelect.addEventListener('change', () => this.render());
    this.pauseButton.addEventListener('click', () => this.setPaused(!this.paused));
    // The list is one tab stop; the arrow keys, Home and End move within it.
    this.list.addEventListener('keydown', (event) => this.moveFocus(event));
  }

  moveFocus(event) {
    const buttons = [...this.list.querySelectorAll('button')];
    const index = buttons.indexOf(document.activeElement);
    if (index < 0) return;
    const targets = { ArrowDown: index + 1, ArrowUp: index - 1, Home: 0, End: buttons.length - 1 };
    const next = buttons[targets[event.key]];
    if (!(event.key in targets) || !next) return;
    event.preventDefault();
    buttons[index].tabIndex = -1;
    next.tabIndex = 0;
    next.focus();
  }

  /** Leaves exactly one row in the tab order: the chosen event's, or the newest. */
  updateTabStop() {
    const current = this.list.querySelector('button[tabindex="0"]');
    if (current) return;
    const stop = this.list.querySelector('button[aria-current="true"]') || this.list.querySelector('button');
    if (stop) stop.tabIndex = 0;
  }

  /** Subscribes from position `from` (inclusive): the recent past first, then live events. */
  start(from) {
    if (this.source) this.source.close();
    const source = new EventSource(`/subscribe?from=${from}`);
    this.source = source;
    this.onConnection('connecting', 'connecting…');
    source.onmessage = (message) => this.receive(JSON.parse(message.data));
    source.addEventListener('caughtUp', () => {
      this.live = true;
      this.onConnection('live', 'live');
    });
    source.addEventListener('error', (event) => {
      if (event.data) {
        // The server's own `event: error`: the store failed or closed.
        this.onConnection('down', `the stream failed: ${JSON.parse(event.data).error}`);
        return;
      }
      if (source.readyState === EventSource.CLOSED) {
        // Refused, not dropped (a restarted server's new session key, say): open a session
        // again and go on after the last event shown.
        this.onConnection('down', 'disconnected; retrying…');
        const reopen = async () => {
          if (this.source !== source) return;
          try {
            await ensureSession();
            this.start(this.last + 1);
          } catch {
            setTimeout(reopen, 2000);
          }
        };
        setTimeout(reopen, 2000);
      } else {
        this.onConnection('connecting', 'reconnecting…');
      }
    });
  }

  receive(event) {
    if (event.position <= this.last) return;
    this.last = event.position;
    this.events.push(event);
    if (this.events.length > kept) this.events.shift();
    this.learn(this.categories, this.categorySelect, category(event.stream));
    this.learn(this.types, this.typeSelect, event.type);
    this.onEvent(event, this.live);
    if (this.paused) {
      if (this.matches(event)) this.showWaiting(this.waiting + 1);
      return;
    }
    this.shownThrough = event.position;
    if (this.matches(event)) {
      this.list.prepend(this.row(event));
      while (this.list.children.length > kept) this.list.lastElementChild.remove();
      this.updateTabStop();
    }
  }

  /** Adds `value` to a filter's options, in order, the first time it is seen. */
  learn(seen, select, value) {
    if (seen.has(value)) return;
    seen.add(value);
    const option = element('option', { value, textContent: value });
    const next = [...select.options].slice(1).find((existing) => existing.value > value);
    select.insertBefore(option, next || null);
  }

  matches(event) {
    const wantedCategory = this.categorySelect.value;
    const wantedType = this.typeSelect.value;
    return (!wantedCategory || category(event.stream) === wantedCategory) && (!wantedType || event.type === wantedType);
  }

  showWaiting(count) {
    this.waiting = count;
    this.waitingNote.textContent = count ? `${count} new event${count === 1 ? '' : 's'} waiting` : '';
  }

  setPaused(paused) {
    this.paused = paused;
    this.pauseButton.textContent = paused ? 'Resume' : 'Pause';
    this.pauseButton.setAttribute('aria-pressed', String(paused));
    if (!paused) {
      this.shownThrough = this.last;
      this.render();
    }
  }

  /** Shows the kept events the filters match, up to the last one shown before a pause. */
  render() {
    const shown = this.events.filter((event) => event.position <= this.shownThrough && this.matches(event));
    this.list.replaceChildren(...shown.reverse().map((event) => this.row(event)));
    this.updateTabStop();
    const waiting = this.events.filter((event) => event.position > this.shownThrough && this.matches(event)).length;
    this.showWaiting(waiting);
  }

  row(event) {
    const time = new Date(eventTime(event.recordedAt));
    const button = element('button', { type: 'button', tabIndex: -1, attrs: { 'data-position': String(event.position) } },
      element('span', { className: 'position', textContent: `#${event.position}` }),
      element('span', { className: 'stream', textContent: `${event.stream} v${event.version}` }),
      element('span', { className: 'type', textContent: event.type }),
      element('time', { className: 'time', dateTime: event.recordedAt, textContent: time.toLocaleTimeString() }));
    if (this.selected === event.position) button.setAttribute('aria-current', 'true');
    button.addEventListener('click', () => this.show(event));
    return element('li', {}, button);
  }

  /** The event's data and metadata as formatted JSON, beside the list. */
  show(event) {
    this.selected = event.position;
    for (const button of this.list.querySelectorAll('button[aria-current]')) button.removeAttribute('aria-current');
    const current = this.list.querySelector(`button[data-position="${event.position}"]`);
    if (current) current.setAttribute('aria-current', 'true');
    const facts = element('dl', { className: 'facts' },
      ...[['Stream', event.stream], ['Version', event.version], ['Id', event.id], ['Recorded', event.recordedAt]]
        .map(([name, value]) => element('div', {}, element('dt', { textContent: name }), element('dd', { textContent: String(value) }))));
    this.detail.replaceChildren(
      element('h3', { textContent: `#${event.position} ${event.type}` }),
      facts,
      element('h4', { textContent: 'Data' }),
      element('pre', { className: 'json', id: 'event-data', textContent: JSON.stringify(event.data, null, 2) }),
      element('h4', { textContent: 'Metadata' }),
      element('pre', { className: 'json', id: 'event-metadata', textContent: JSON.stringify(event.metadata, null, 2) }));
  }
}
