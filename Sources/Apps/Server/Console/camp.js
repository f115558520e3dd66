// The campground: sites, campers and reservations (the campsites, campers and reservations
// projections), and the forms that add, reserve and cancel (POST /apps/camp/*).
import { command, element, onSubmit, field, query } from '/console/api.js';

/** How many rows of each table the page shows. */
const shown = 200;

export class CampView {
  constructor() {
    onSubmit('site-form', () => this.command('add-site', {
      number: Number(field('site-number')),
      electricity: document.getElementById('site-electricity').checked,
      water: document.getElementById('site-water').checked,
    }));
    onSubmit('camper-form', () => this.command('add-camper', { name: field('camper-name'), phone: field('camper-phone') }));
    onSubmit('reserve-form', () => this.command('reserve', {
      site: Number(field('reserve-site')), camper: field('reserve-camper'),
      date: field('reserve-date'), nights: Number(field('reserve-nights')),
    }));
    document.getElementById('camp-key').addEventListener('change', () => this.refresh(0));
    onSubmit('camp-key-form', () => this.refresh(0));
  }

  get campground() {
    return field('camp-key') || 'default';
  }

  /** The streams whose events change what the view shows. */
  get streams() {
    return [`campground-${this.campground}`];
  }

  command(name, body) {
    // A reservation recorded as Invalid is a refusal that changed the tables: both show.
    return command('camp-error', `/apps/camp/${name}`, { campground: this.campground, ...body }, (position) => this.refresh(position));
  }

  /** Reads the three tables, at least as recent as `position`. */
  async refresh(position) {
    const asked = this.campground;
    const parameters = { campground: asked, limit: String(shown) };
    const [sites, campers, reservations] = await Promise.all([
      query('campsites', parameters, position), query('campers', parameters, position), query('reservations', parameters, position),
    ]);
    // Dropped when another campground was chosen meanwhile; not redrawn when nothing changed
    // (a redraw would take the focus from a button).
    const rendered = JSON.stringify([sites, campers, reservations]);
    if (asked !== this.campground || rendered === this.rendered) return;
    this.rendered = rendered;
    const rows = (id, items, makeRow, empty) => {
      const body = document.querySelector(`#${id} tbody`);
      const made = items.map(makeRow);
      if (!made.length) made.push(element('tr', {}, element('td', { className: 'muted', colSpan: 8, textContent: empty })));
      body.replaceChildren(...made);
    };
    const yes = (value) => (value ? 'yes' : 'no');
    rows('camp-sites', sites.sites, (site) => {
      const remove = element('button', { type: 'button', textContent: 'Delete', attrs: { 'aria-label': `Delete site ${site.number}` } });
      remove.addEventListener('click', () => this.command('delete-site', { number: site.number }));
      return element('tr', {}, element('th', { scope: 'row', textContent: String(site.number) }),
        element('td', { textContent: yes(site.electricity) }), element('td', { textContent: yes(site.water) }), element('td', {}, remove));
    }, 'No sites.');
    const camperList = listOf(campers);
    rows('camp-campers', camperList, (camper) => element('tr', {},
      element('th', { scope: 'row', textContent: camper.id }), element('td', { textContent: camper.fullName }),
      element('td', { textContent: camper.phoneNumber })), 'No campers.');
    rows('camp-reservations', listOf(reservations), (reservation) => {
      const cells = [reservation.id, reservation.site, reservation.camper, reservation.dateFrom, reservation.dateTo]
        .map((value) => element('td', { textContent: String(value) }));
      const status = element('td', { className: `status-${reservation.status}`, textContent: reservation.status });
      const actions = element('td', {});
      if (reservation.status === 'Reserved') {
        const cancel = element('button', { type: 'button', textContent: 'Cancel', attrs: { 'aria-label': `Cancel reservation ${reservation.id}` } });
        cancel.addEventListener('click', () => this.command('cancel', { reservation: reservation.id }));
        actions.append(cancel);
      }
      return element('tr', {}, ...cells, status, element('td', { textContent: reservation.problem || '' }), actions);
    }, 'No reservations.');
    // The next free number is suggested unless someone typed another.
    const siteNumber = document.getElementById('site-number');
    if (siteNumber.value === '' || siteNumber.value === this.suggested) {
      this.suggested = String(sites.nextSiteNumber);
      siteNumber.value = this.suggested;
    }
    choices('reserve-site', sites.sites.map((site) => [String(site.number), `site ${site.number}`]));
    choices('reserve-camper', camperList.map((camper) => [camper.id, `${camper.id} ${camper.fullName}`]));
  }
}

/** A list query's items: the array itself, or a page's `items` when it was paged. */
function listOf(value) {
  return Array.isArray(value) ? value : (value.items || []);
}

/** Replaces a select's options, keeping the chosen one when it is still there. */
function choices(id, options) {
  const select = document.getElementById(id);
  const chosen = select.value;
  select.replaceChildren(...options.map(([value, text]) => element('option', { value, textContent: text })));
  if (options.some(([value]) => value === chosen)) select.value = chosen;
}

/** The view as the console loads it (see the server's ConsoleView). */
export const view = {
  title: 'Campground',
  html: `
  <h2 id="camp-title">Campground</h2>
  <form class="controls" id="camp-key-form">
    <label>Campground <input id="camp-key" value="default" autocomplete="off" required></label>
  </form>
  <p id="camp-error" class="error" role="alert" hidden></p>
  <div class="columns">
    <div>
      <h3>Sites</h3>
      <table id="camp-sites"><thead><tr><th scope="col">Site</th><th scope="col">Electricity</th><th scope="col">Water</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead><tbody></tbody></table>
      <form id="site-form" class="controls">
        <label>Number <input type="number" id="site-number" min="1" required></label>
        <label class="check"><input type="checkbox" id="site-electricity"> electricity</label>
        <label class="check"><input type="checkbox" id="site-water"> water</label>
        <button type="submit">Add site</button>
      </form>
    </div>
    <div>
      <h3>Campers</h3>
      <table id="camp-campers"><thead><tr><th scope="col">Id</th><th scope="col">Name</th><th scope="col">Phone</th></tr></thead><tbody></tbody></table>
      <form id="camper-form" class="controls">
        <label>Full name <input id="camper-name" autocomplete="off" required></label>
        <label>Phone <input id="camper-phone" type="tel" autocomplete="off" required></label>
        <button type="submit">Add camper</button>
      </form>
    </div>
  </div>
  <h3>Reservations</h3>
  <div class="scroll">
    <table id="camp-reservations"><thead><tr><th scope="col">Id</th><th scope="col">Site</th><th scope="col">Camper</th><th scope="col">From</th><th scope="col">To</th><th scope="col">Status</th><th scope="col">Problem</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead><tbody></tbody></table>
  </div>
  <form id="reserve-form" class="controls">
    <label>Site <select id="reserve-site" required></select></label>
    <label>Camper <select id="reserve-camper" required></select></label>
    <label>From <input type="date" id="reserve-date" required></label>
    <label>Nights <input type="number" id="reserve-nights" value="2" required></label>
    <button type="submit">Reserve</button>
  </form>
`,
  create: () => new CampView(),
};
