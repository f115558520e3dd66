// The workout (POST /apps/fitness/*, the app-state projection) and its alert queue
// (POST /apps/alerts/*, the alerts projection), for the user chosen on the page.
import { command, element, field, onSubmit, query } from '/console/api.js';

/** What the workout's one button does for each label the app shows. */
const buttonCommands = { Start: 'start', Pause: 'pause', Resume: 'start', 'Start Over': 'restart', 'Try Again': 'restart' };

export class WorkoutView {
  constructor() {
    this.button = document.getElementById('workout-button');
    this.button.addEventListener('click', () => {
      const command = buttonCommands[this.button.textContent];
      if (command) this.command('fitness', command, {});
    });
    onSubmit('goal-form', () => this.command('fitness', 'goal', { steps: Number(field('goal-steps')) }));
    onSubmit('walk-form', () => this.command('fitness', 'walk', { steps: Number(field('walk-steps')), distance: Number(field('walk-distance')) }));
    onSubmit('nessie-form', () => this.command('fitness', 'nessie', { meters: Number(field('nessie-meters')) }));
    onSubmit('alert-form', () => this.command('alerts', 'post', { text: field('alert-text'), severity: field('alert-severity') }));
    document.getElementById('alerts-clear').addEventListener('click', () => this.command('alerts', 'clear', { all: true }));
    document.getElementById('workout-user').addEventListener('change', () => this.refresh(0));
    onSubmit('workout-user-form', () => this.refresh(0));
  }

  get user() {
    return field('workout-user') || 'default';
  }

  /** The streams whose events change what the view shows. */
  get streams() {
    return [`fitness-${this.user}`, `alerts-${this.user}`];
  }

  command(app, name, body) {
    return command('workout-error', `/apps/${app}/${name}`, { user: this.user, ...body }, (position) => this.refresh(position));
  }

  /** Reads the user's workout and alerts, at least as recent as `position`. */
  async refresh(position) {
    const user = this.user;
    const [workout, alerts] = await Promise.all([
      query('app-state', { user }, position),
      query('alerts', { user }, position),
    ]);
    // An answer for a user no longer chosen is dropped: the change asked for the new one.
    if (user !== this.user) return;
    const set = (id, value) => { document.getElementById(id).textContent = value; };
    set('workout-state', workout.state);
    set('workout-goal', workout.goal === null ? 'none' : `${workout.goal} steps`);
    set('workout-steps', String(workout.steps));
    set('workout-distance', `${workout.distance} m`);
    set('workout-nessie', `${workout.nessie} m`);
    this.button.textContent = workout.label;
    const scale = Math.max(workout.distance, workout.nessie, 1);
    document.getElementById('race-user').style.left = `${(workout.distance / scale) * 90}%`;
    document.getElementById('race-nessie').style.left = `${(workout.nessie / scale) * 90}%`;
    const items = alerts.alerts.map((alert) => element('li', { className: alert.severity },
      alert.name ? element('strong', { textContent: `${alert.name}: ` }) : '', alert.text));
    if (!items.length) items.push(element('li', { className: 'muted', textContent: 'No alerts.' }));
    document.getElementById('alerts').replaceChildren(...items);
  }
}

/** The view as the console loads it (see the server's ConsoleView). */
export const view = {
  title: 'Workout',
  html: `
  <h2 id="workout-title">Workout</h2>
  <form class="controls" id="workout-user-form">
    <label>User <input id="workout-user" value="default" autocomplete="off" required></label>
  </form>
  <div class="workout">
    <dl class="facts large">
      <div><dt>State</dt><dd id="workout-state">…</dd></div>
      <div><dt>Goal</dt><dd id="workout-goal">…</dd></div>
      <div><dt>Steps</dt><dd id="workout-steps">…</dd></div>
      <div><dt>Distance</dt><dd id="workout-distance">…</dd></div>
      <div><dt>Nessie</dt><dd id="workout-nessie">…</dd></div>
    </dl>
    <div class="race" aria-hidden="true"><span id="race-user" class="runner">🏃</span><span id="race-nessie" class="runner">🦕</span></div>
    <button type="button" id="workout-button" class="primary">Start</button>
  </div>
  <p id="workout-error" class="error" role="alert" hidden></p>
  <div class="forms">
    <form id="goal-form">
      <label>Goal (steps) <input type="number" id="goal-steps" min="1" value="1000" required></label>
      <button type="submit">Set goal</button>
    </form>
    <form id="walk-form">
      <label>Steps <input type="number" id="walk-steps" min="0" value="100" required></label>
      <label>Distance (m) <input type="number" id="walk-distance" min="0" step="any" value="70" required></label>
      <button type="submit">Walk</button>
    </form>
    <form id="nessie-form">
      <label>Nessie at (m) <input type="number" id="nessie-meters" min="0" step="any" value="10" required></label>
      <button type="submit">Move Nessie</button>
    </form>
  </div>
  <h3>Alert queue</h3>
  <ol id="alerts" class="alerts" aria-label="Alerts, next first"></ol>
  <form id="alert-form" class="controls">
    <label>Alert <input id="alert-text" autocomplete="off" required></label>
    <label>Severity <select id="alert-severity"><option>good</option><option>bad</option></select></label>
    <button type="submit">Post alert</button>
    <button type="button" id="alerts-clear">Clear all</button>
  </form>
`,
  create: () => new WorkoutView(),
};
