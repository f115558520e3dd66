// The server's JSON API as the page uses it: requests that open a session when the server asks
// for its token, projection queries, and small helpers the views share.

/** A refusal or failure the server answered with its JSON error (`{"error", "code"}`). */
export class ApiError extends Error {
  constructor(status, code, message, body) {
    super(message);
    this.status = status;
    this.code = code;
    this.body = body;
  }
}

let sessionOpening = null;

/**
 * Resolves once requests carry the server's rights: at once when the server has no token or the
 * session cookie is valid (`GET /health` says `authorized`), otherwise after the token dialog
 * opened a session with `POST /session`. One dialog at most, whoever asks.
 */
export function ensureSession() {
  if (!sessionOpening) {
    sessionOpening = openSession().finally(() => { sessionOpening = null; });
  }
  return sessionOpening;
}

async function openSession() {
  const health = await (await fetch('/health', { credentials: 'same-origin' })).json();
  if (health.authorized) return;
  const dialog = document.getElementById('token-dialog');
  const form = document.getElementById('token-form');
  const input = document.getElementById('token-input');
  const problem = document.getElementById('token-error');
  dialog.showModal();
  input.focus();
  await new Promise((resolve) => {
    const submit = async (event) => {
      event.preventDefault();
      const response = await fetch('/session', {
        method: 'POST', credentials: 'same-origin',
        headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ token: input.value }),
      });
      if (response.status === 204) {
        form.removeEventListener('submit', submit);
        input.value = '';
        problem.hidden = true;
        dialog.close();
        resolve();
      } else if (response.status === 401) {
        problem.textContent = 'That is not the token this server was started with.';
        problem.hidden = false;
        input.select();
      } else {
        problem.textContent = `The server answered ${response.status}; try again.`;
        problem.hidden = false;
        input.select();
      }
    };
    form.addEventListener('submit', submit);
  });
}

// The page reads nothing without the token: Escape does not close the dialog.
document.getElementById('token-dialog').addEventListener('cancel', (event) => event.preventDefault());

/**
 * `method path` with `body` as JSON; resolves to the answer's JSON (or text). A 401 opens a
 * session and tries once more; any other error status rejects with an ApiError carrying the
 * server's sentence.
 */
export async function api(method, path, body) {
  for (let attempt = 0; ; attempt += 1) {
    const init = { method, credentials: 'same-origin', headers: { Accept: 'application/json' } };
    if (body !== undefined) {
      init.headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    let response;
    try {
      response = await fetch(path, init);
    } catch (error) {
      throw new ApiError(0, 'network', `The server did not answer ${method} ${path} (${error.message}); the page keeps trying.`);
    }
    if (response.status === 401 && attempt === 0) {
      await ensureSession();
      continue;
    }
    const text = await response.text();
    let value = text;
    try { value = text ? JSON.parse(text) : null; } catch { /* not JSON: keep the text */ }
    if (!response.ok) {
      const sentence = value && value.error ? value.error : `${method} ${path} answered ${response.status}.`;
      throw new ApiError(response.status, value && value.code, sentence, value);
    }
    return value;
  }
}

/**
 * A projection's query result (`GET /projections/NAME`) for `parameters` (an object or a query
 * string); with `minPosition`, at least that recent (the server waits up to 5 s for it).
 */
export function query(name, parameters = {}, minPosition = 0) {
  const search = new URLSearchParams(parameters);
  if (minPosition > 0) {
    search.set('minPosition', String(minPosition));
    search.set('timeout', '5');
  }
  const text = search.toString();
  return api('GET', `/projections/${encodeURIComponent(name)}${text ? `?${text}` : ''}`);
}

/**
 * A function that runs `task` soon, at most one run at a time and at most once per `delay`
 * milliseconds however often it is called: a burst of events refreshes a view once, not once per
 * event. Errors go to `onError`.
 */
export function coalesce(task, onError, delay = 150) {
  let timer = null;
  let running = false;
  let again = false;
  const run = async () => {
    timer = null;
    if (running) { again = true; return; }
    running = true;
    try { await task(); } catch (error) { onError(error); }
    running = false;
    if (again) { again = false; schedule(); }
  };
  const schedule = () => { if (timer === null) timer = setTimeout(run, delay); };
  return schedule;
}

/**
 * Runs `task` until it succeeds, every `delay` milliseconds, showing each failure with
 * `onError`: what the page cannot start without (the store's statistics) is asked again, not
 * given up on after one refused request.
 */
export async function retrying(task, onError, delay = 2000) {
  for (;;) {
    try {
      return await task();
    } catch (error) {
      onError(error);
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}

/**
 * Runs `task` `delay` milliseconds from now, and again `delay` milliseconds after each run ends
 * (never two at once, however slow the server); errors go to `onError`, successes to `onSuccess`.
 */
export function every(delay, task, onError, onSuccess = () => {}) {
  const run = async () => {
    try {
      await task();
      onSuccess();
    } catch (error) {
      onError(error);
    }
    setTimeout(run, delay);
  };
  setTimeout(run, delay);
}

/** Shows `error`'s sentence in the alert element `id` (or hides it when `error` is null). */
export function showError(id, error) {
  const element = document.getElementById(id);
  if (!element) return;
  element.hidden = !error;
  element.textContent = error ? (error.message || String(error)) : '';
}

/** Runs `task`, showing what it throws in the alert element `id` and clearing it on success. */
export async function attempt(id, task) {
  try {
    const result = await task();
    showError(id, null);
    return result;
  } catch (error) {
    showError(id, error);
    return undefined;
  }
}

/**
 * Runs an app's command: `POST path` with `body`, then `refresh(position)` as recent as the last
 * event it recorded (a refusal that recorded something, as an Invalid reservation, refreshes too).
 * Errors go to the alert element `errorId`; resolves to the recorded events, or undefined.
 */
export function command(errorId, path, body, refresh) {
  return attempt(errorId, async () => {
    let recorded;
    try {
      recorded = await api('POST', path, body);
    } catch (error) {
      const refused = error.body && error.body.recorded;
      if (refused && refused.length) await refresh(refused.at(-1).position);
      throw error;
    }
    await refresh(Array.isArray(recorded) && recorded.length ? recorded.at(-1).position : 0);
    return recorded;
  });
}

/** An element `tag` with `properties` (className, textContent, attributes via `attrs`) and children. */
export function element(tag, properties = {}, ...children) {
  const node = document.createElement(tag);
  const { attrs, ...rest } = properties;
  Object.assign(node, rest);
  for (const [name, value] of Object.entries(attrs || {})) node.setAttribute(name, value);
  for (const child of children) node.append(child);
  return node;
}

/** The time of an event's `recordedAt` (microseconds are cut to what Date keeps). */
export function eventTime(recordedAt) {
  return Date.parse(String(recordedAt).replace(/(\.\d{3})\d*/, '$1'));
}

/** Runs `task` when form `id` is submitted, instead of the browser's own submission. */
export function onSubmit(id, task) {
  document.getElementById(id).addEventListener('submit', (event) => {
    event.preventDefault();
    task();
  });
}

/** The value of input `id`, trimmed. */
export function field(id) {
  return document.getElementById(id).value.trim();
}
