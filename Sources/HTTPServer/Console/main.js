// The console's start: opens a session when the server needs its token, shows the store's facts
// in the header, follows the log live, and lets each view refresh itself when events that
// concern it arrive.
import { api, coalesce, ensureSession, eventTime, every, retrying, showError } from './api.js';
import { Tail } from './tail.js';
import { LagChart, RateChart } from './charts.js';
import { ProjectionsView } from './projections.js';
import { WorkoutView } from './workout.js';
import { ChatView } from './chat.js';
import { CampView } from './camp.js';
import { ColorView } from './color.js';

/** How many recent events the tail shows when the page opens. */
const recent = 200;
const views = ['log', 'projections', 'workout', 'chat', 'camp', 'color'];
const reportError = (error) => showError('page-error', error);

function showView() {
  const wanted = location.hash.slice(1);
  const name = views.includes(wanted) ? wanted : 'log';
  for (const section of document.querySelectorAll('main > section')) section.hidden = section.dataset.view !== name;
  for (const link of document.querySelectorAll('nav a')) {
    if (link.getAttribute('href') === `#${name}`) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  document.body.dataset.view = name;
}

function set(id, text) {
  document.getElementById(id).textContent = text;
}

async function start() {
  showView();
  window.addEventListener('hashchange', showView);
  await retrying(() => ensureSession(), reportError);

  const stats = await retrying(() => api('GET', '/stats'), reportError);
  let head = stats.headPosition;
  set('store-location', stats.path);
  const showHead = () => set('head-position', String(head));
  showHead();
  const refreshStats = coalesce(async () => {
    const latest = await api('GET', '/stats');
    head = Math.max(head, latest.headPosition);
    showHead();
    set('event-count', String(latest.eventCount));
    set('stream-count', String(latest.streamCount));
  }, reportError, 300);
  refreshStats();

  const projections = new ProjectionsView();
  const rate = new RateChart(document.getElementById('rate-chart'), document.getElementById('rate-peak'));
  const lag = new LagChart(document.getElementById('lag-chart'), document.getElementById('lag-legend'));
  const workout = new WorkoutView();
  const chat = new ChatView();
  const camp = new CampView();
  const color = new ColorView();

  const sampleProjections = async () => {
    const statuses = await api('GET', '/projections');
    projections.show(statuses);
    lag.add(Date.now(), statuses);
  };
  await retrying(sampleProjections, reportError);

  // Each view refreshes when an event of the streams it shows arrives, as recent as that event,
  // once per burst.
  let latest = head;
  const refreshing = (view) => coalesce(() => view.refresh(latest), reportError);
  const refreshQuery = refreshing(projections);
  const apps = [workout, chat, camp, color].map((view) => ({ view, refresh: refreshing(view) }));

  const tail = new Tail({
    onEvent: (event, live) => {
      rate.add(eventTime(event.recordedAt));
      latest = Math.max(latest, event.position);
      if (event.position > head) { head = event.position; showHead(); }
      if (!live) return;
      refreshStats();
      refreshQuery();
      for (const app of apps) if (app.view.streams.includes(event.stream)) app.refresh();
    },
    onConnection: (state, text) => {
      const element = document.getElementById('connection');
      element.dataset.state = state;
      element.textContent = text;
    },
  });
  tail.start(Math.max(1, head - recent + 1));

  await Promise.all([workout.refresh(0), chat.refresh(0), camp.refresh(0), color.refresh(0)]).catch(reportError);

  const tick = () => {
    const now = Date.now();
    rate.draw(now);
    lag.draw(now);
  };
  tick();
  setInterval(tick, 1000);
  // A failure shown in the page's banner stays until the next sample succeeds.
  every(2000, sampleProjections, reportError, () => showError('page-error', null));
  setInterval(refreshStats, 5000);
  showError('page-error', null);
  document.body.dataset.ready = 'true';
}

start().catch(reportError);
