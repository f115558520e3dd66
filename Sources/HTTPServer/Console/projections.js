// Projections: where each stands (GET /projections), a rebuild with its progress
// (POST /projections/NAME/rebuild), one projection's query result for the parameters it declares
// (GET /projections/NAME/about), refreshed as events arrive, and its tables' rows a page at a time.
import { api, attempt, element, query } from './api.js';
import { TablesView } from './tables.js';

export class ProjectionsView {
  constructor() {
    this.body = document.querySelector('#projections tbody');
    this.rows = new Map();
    this.rebuilding = new Set();
    this.names = document.getElementById('query-name');
    this.fields = document.getElementById('query-fields');
    this.live = document.getElementById('query-live');
    this.result = document.getElementById('query-result');
    this.tables = new TablesView();
    this.asked = null;
    this.described = null;
    document.getElementById('query-form').addEventListener('submit', (event) => {
      event.preventDefault();
      const parameters = {};
      for (const input of this.fields.querySelectorAll('input')) {
        if (input.value.trim() !== '') parameters[input.name] = input.value.trim();
      }
      this.asked = { name: this.names.value, parameters };
      this.runQuery(0);
    });
    this.names.addEventListener('change', () => {
      if (this.names.value !== this.described) this.describe(this.names.value);
    });
  }

  /**
   * Shows what `name` takes and holds (GET /projections/NAME/about): one field per query
   * parameter, and its tables to browse.
   */
  async describe(name) {
    if (!name) return;
    this.described = name;
    const about = await attempt('query-error', () => api('GET', `/projections/${encodeURIComponent(name)}/about`));
    if (!about || this.described !== name) return;
    this.fields.replaceChildren(...about.queryParameters.map((parameter) => element('label', { title: parameter.help },
      parameter.name, element('input', { name: parameter.name, autocomplete: 'off', placeholder: parameter.help.slice(0, 40) }))));
    this.fields.dataset.projection = name;
    this.tables.show(about);
  }

  /** Shows `statuses` (GET /projections), row by row, keeping rebuilds under way as they are. */
  show(statuses) {
    for (const status of statuses) {
      let row = this.rows.get(status.name);
      if (!row) {
        row = this.makeRow(status.name);
        this.rows.set(status.name, row);
        this.body.append(row.element);
        this.names.append(element('option', { value: status.name, textContent: status.name }));
        if (this.described === null) this.describe(status.name);
      }
      row.version.textContent = String(status.version);
      row.checkpoint.textContent = String(status.checkpoint);
      row.lag.textContent = String(status.lag);
      row.hash.textContent = status.hash;
      if (status.rebuild) {
        // A rebuild under way (this page's or another client's).
        if (!this.rebuilding.has(status.name)) delete row.note.dataset.state;
        const total = status.rebuild.position + status.rebuild.lag;
        row.progress.hidden = false;
        row.progress.max = Math.max(total, 1);
        row.progress.value = status.rebuild.position;
        const speed = status.rebuild.eventsPerSecond ? `, ${status.rebuild.eventsPerSecond}/s` : '';
        row.note.textContent = `${status.rebuild.position} of ${total}${speed}`;
      } else if (!this.rebuilding.has(status.name) && !row.note.dataset.state) {
        row.progress.hidden = true;
        row.note.textContent = status.building ? 'building' : '';
      }
    }
  }

  makeRow(name) {
    const cell = (className) => element('td', { className });
    const row = {
      version: cell('numeric'), checkpoint: cell('numeric'), lag: cell('numeric'), hash: cell('hash'),
      progress: element('progress', { max: 1, value: 0, hidden: true, attrs: { 'aria-label': `Rebuild of ${name}` } }),
      note: element('output', {}),
      button: element('button', { type: 'button', textContent: 'Rebuild', attrs: { 'aria-label': `Rebuild ${name}` } }),
    };
    row.button.addEventListener('click', () => this.rebuild(name));
    row.element = element('tr', { attrs: { 'data-name': name } },
      element('th', { scope: 'row', textContent: name }), row.version, row.checkpoint, row.lag,
      element('td', { className: 'rebuild' }, row.progress, row.note), row.hash, element('td', {}, row.button));
    return row;
  }

  /**
   * Rebuilds `name` beside the state that serves, following its progress until the server
   * answers with its report, then says whether the state hash came out the same.
   */
  async rebuild(name) {
    const row = this.rows.get(name);
    this.rebuilding.add(name);
    row.button.disabled = true;
    row.progress.hidden = false;
    row.progress.removeAttribute('value');
    row.note.dataset.state = 'running';
    row.note.textContent = 'rebuilding…';
    let done = false;
    let before = null;
    const follow = (async () => {
      while (!done) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        if (!done) await api('GET', '/projections').then((statuses) => this.show(statuses), () => {});
      }
    })();
    try {
      // The state that serves, caught up with the head (it follows appends within moments):
      // what the rebuilt state must equal.
      for (let tries = 0; tries < 25; tries += 1) {
        before = (await api('GET', '/projections')).find((status) => status.name === name);
        if (!before || before.lag === 0) break;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      const report = await api('POST', `/projections/${encodeURIComponent(name)}/rebuild`);
      done = true;
      await follow;
      row.progress.max = Math.max(report.eventsApplied + report.eventsSkipped, 1);
      row.progress.value = row.progress.max;
      row.hash.textContent = report.hash;
      row.note.dataset.state = 'done';
      let outcome;
      if (before && before.checkpoint === report.checkpoint) {
        outcome = report.hash === before.hash ? 'hash unchanged' : 'hash changed';
      } else {
        // Events arrived meanwhile: the two states are of different positions.
        outcome = `through position ${report.checkpoint}`;
      }
      const took = `${Math.round(report.seconds * 1000)} ms`;
      row.note.textContent = `rebuilt ${report.eventsApplied} events in ${took}, ${outcome}`;
    } catch (error) {
      done = true;
      row.note.dataset.state = 'failed';
      row.note.textContent = `failed: ${error.message}`;
    } finally {
      this.rebuilding.delete(name);
      row.button.disabled = false;
    }
  }

  /** Runs the asked query again when events arrive, as recent as the event that called. */
  refresh(position) {
    if (this.asked && this.live.checked) this.runQuery(position);
  }

  async runQuery(minPosition) {
    const asked = this.asked;
    if (!asked) return;
    const answered = await attempt('query-error', async () => {
      const value = await query(asked.name, asked.parameters, minPosition);
      if (asked === this.asked) this.result.textContent = JSON.stringify(value, null, 2);
      return true;
    });
    // A refused query shows its sentence, not the result of the parameters asked before.
    if (!answered && asked === this.asked) this.result.textContent = '';
  }
}
