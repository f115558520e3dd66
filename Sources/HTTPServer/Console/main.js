// The console's start: opens a session when the server needs its token, shows the store's facts
// in the header, follows the log live, loads the views of the apps the server serves
// (/console/views.json), and lets each view refresh itself when events that concern it arrive.
import { api, coalesce, element, ensureSession, eventTime, every, retrying, showError } from './api.js';
import { Tail } from './tail.js';
import { LagChart, RateChart } from './charts.js';
import { ProjectionsView } from './projections.js';
import { CommandsView } from './commands.js';

/** How many recent events the tail shows when the page opens. */
const recent = 200;
/** The console's own views; the apps' follow them in the menu. */
const views = ['log', 'projections', 'commands'];
const reportError = (error) => showError('page-error', error);

/**
 * Adds the served apps' views (their menu entries, sections, styles and scripts) and returns
 * them made: each with `streams` and `refresh(position)`. A view whose script fails to load is
 * left out, and said so in a banner of its own (the page's banner clears when the server
 * answers again; this one stays); the others still come.
 */
async function loadAppViews() {
  const response = await fetch('/console/views.json', { credentials: 'same-origin' });
  if (!response.ok) throw new Error(`The list of the apps' views did not load (${response.status}).`);
  const listed = (await response.json()).views;
  const made = [];
  const failed = [];
  for (const listing of listed) {
    try {
      const module = await import(listing.script);
      if (listing.stylesheet) {
        document.head.append(element('link', { rel: 'stylesheet', href: listing.stylesheet }));
      }
      const section = element('section', {
        id: `view-${listing.name}`, hidden: true, attrs: { 'data-view': listing.name, 'aria-label': module.view.title || listing.title },
      });
      section.innerHTML = module.view.html;
      document.querySelector('main').append(section);
      document.getElementById('views-nav').append(
        element('li', {}, element('a', { href: `#${listing.name}`, textContent: listing.title })));
      views.push(listing.name);
      made.push(module.view.create());
    } catch (error) {
      failed.push(`The view '${listing.name}' did not load: ${error.message}`);
    }
  }
  showError('views-error', failed.length ? new Error(failed.join(' ')) : null);
  return made;
}

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
  const appViews = await retrying(loadAppViews, reportError);
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
  const commands = new CommandsView();

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
  const apps = appViews.map((view) => ({ view, refresh: refreshing(view) }));

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

  await Promise.all([commands.load(), ...appViews.map((view) => view.refresh(0))]).catch(reportError);

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
