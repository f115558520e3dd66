// The color calculator: its keypad (POST /apps/color/press), its display, values, name and a
// background in the color (the color projection, and each press's answer).
import { api, attempt, element, field, onSubmit, query } from '/console/api.js';

const keys = ['C', 'D', 'E', 'F', '8', '9', 'A', 'B', '4', '5', '6', '7', '0', '1', '2', '3'];

export class ColorView {
  constructor() {
    const keypad = document.getElementById('keypad');
    const button = (key, text, label) => {
      const made = element('button', { type: 'button', textContent: text, attrs: { 'data-key': key, 'aria-label': label } });
      made.addEventListener('click', () => this.command('press', { key }));
      return made;
    };
    keypad.append(...keys.map((key) => button(key, key, `Key ${key}`)),
      button('backspace', '⌫', 'Backspace'), button('clear', 'Clear', 'Clear'));
    onSubmit('color-set-form', () => this.command('set', { hex: field('color-set') }));
    document.getElementById('color-key').addEventListener('change', () => this.refresh(0));
    onSubmit('color-key-form', () => this.refresh(0));
    // The keyboard is a keypad too while this view shows and no field has the focus.
    document.addEventListener('keydown', (event) => {
      if (document.body.dataset.view !== 'color' || event.ctrlKey || event.metaKey || event.altKey) return;
      if (event.target.closest && event.target.closest('input, select, textarea, dialog')) return;
      const key = /^[0-9a-fA-F]$/.test(event.key) ? event.key.toUpperCase()
        : event.key === 'Backspace' ? 'backspace' : event.key === 'Escape' ? 'clear' : null;
      if (!key) return;
      event.preventDefault();
      this.command('press', { key });
    });
  }

  get calculator() {
    return field('color-key') || 'default';
  }

  /** The streams whose events change what the view shows. */
  get streams() {
    return [`color-${this.calculator}`];
  }

  async command(name, body) {
    await attempt('color-error', async () => {
      // The answer is the calculator's state after the press.
      this.show(await api('POST', `/apps/color/${name}`, { calculator: this.calculator, ...body }));
    });
  }

  async refresh(position) {
    const asked = this.calculator;
    const state = await query('color', { calculator: asked }, position);
    if (asked === this.calculator) this.show(state);
  }

  show(state) {
    document.getElementById('color-display').textContent = state.hexText;
    document.getElementById('color-values').textContent = state.rgboText;
    document.getElementById('color-name').textContent = state.name;
    const { red, green, blue, opacity } = state.color;
    const panel = document.getElementById('color-panel');
    panel.style.backgroundColor = `rgba(${red}, ${green}, ${blue}, ${(opacity / 255).toFixed(3)})`;
    // Text that reads on the color: dark on light colors, light on dark ones.
    const light = (0.299 * red + 0.587 * green + 0.114 * blue) * (opacity / 255) + 255 * (1 - opacity / 255) > 150;
    panel.style.color = light ? '#111' : '#fff';
    panel.dataset.color = `${red},${green},${blue},${opacity}`;
  }
}

/** The view as the console loads it (see the server's ConsoleView). */
export const view = {
  title: 'Color',
  html: `
  <h2 id="color-title">Color calculator</h2>
  <form class="controls" id="color-key-form">
    <label>Calculator <input id="color-key" value="default" autocomplete="off" required></label>
  </form>
  <!-- The color is shown over white, as the app shows it, whatever the page's theme. -->
  <div class="color-backing">
    <div id="color-panel" class="color-panel">
      <output id="color-display" class="display" aria-label="Display">#</output>
      <p><span class="muted">R, G, B, O</span> <output id="color-values">---, ---, ---, ---</output></p>
      <p><span class="muted">Name</span> <output id="color-name">------------</output></p>
    </div>
  </div>
  <p class="muted hint">Type 0–9 and A–F on the keyboard too; Backspace deletes a digit, Escape clears.</p>
  <p id="color-error" class="error" role="alert" hidden></p>
  <div id="keypad" class="keypad" role="group" aria-label="Keypad"></div>
  <form id="color-set-form" class="controls">
    <label>Set the display to <input id="color-set" placeholder="#006636AA" autocomplete="off" required></label>
    <button type="submit">Set</button>
  </form>
`,
  create: () => new ColorView(),
};
