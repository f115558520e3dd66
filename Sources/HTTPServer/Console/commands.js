// The commands of the apps the server serves (GET /apps), each a form built from its declared
// fields: text for strings, numbers for integers and numbers, a choice for booleans. Submitting
// posts the filled fields (POST /apps/APP/COMMAND) and shows the answer: the events recorded,
// the app's state, or its refusal.
import { api, ApiError, element, showError } from './api.js';

export class CommandsView {
  constructor() {
    this.forms = document.getElementById('command-forms');
    this.result = document.getElementById('command-result');
  }

  /** Builds a form for every command of every served app. */
  async load() {
    const { apps } = await api('GET', '/apps');
    if (!apps.length) {
      this.forms.replaceChildren(element('p', { className: 'muted', textContent: 'This server serves no app: no command to run.' }));
      return;
    }
    this.forms.replaceChildren(...apps.map((app) => element('div', { className: 'app-commands' },
      element('h3', { textContent: app.summary ? `${app.name}: ${app.summary}` : app.name }),
      ...app.commands.map((command) => this.form(command)))));
  }

  form(command) {
    const inputs = command.fields.map((field) => ({ field, control: control(field) }));
    const form = element('form', { className: 'controls', attrs: { 'data-command': command.path } },
      element('strong', { title: command.summary, textContent: command.path.split('/').slice(2).join(' ') }),
      ...inputs.map(({ field, control }) => element('label', { title: field.summary },
        `${field.name}${field.required ? '' : ' (optional)'}`, control)),
      element('button', { type: 'submit', textContent: 'Run', attrs: { 'aria-label': `Run ${command.path}` } }));
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      const body = {};
      for (const { field, control } of inputs) {
        const value = control.value.trim();
        if (value === '') continue;
        body[field.name] = field.type === 'string' ? control.value
          : field.type === 'boolean' ? value === 'true'
          : Number(value);
      }
      await this.run(command.path, body, form);
    });
    return form;
  }

  /** Runs the command and shows its answer (or refusal) right under its form. */
  async run(path, body, form) {
    form.after(document.getElementById('command-error'), this.result);
    try {
      const answer = await api('POST', path, body);
      showError('command-error', null);
      this.result.textContent = JSON.stringify(answer, null, 2);
    } catch (error) {
      showError('command-error', error);
      this.result.textContent = error instanceof ApiError && error.body ? JSON.stringify(error.body, null, 2) : '';
    }
  }
}

/** The input of one declared field. */
function control(field) {
  const name = field.name;
  if (field.type === 'boolean') {
    const choices = field.required ? ['true', 'false'] : ['', 'true', 'false'];
    return element('select', { name }, ...choices.map((value) => element('option', { value, textContent: value || '—' })));
  }
  if (field.type === 'integer') return element('input', { name, type: 'number', step: '1', required: field.required, placeholder: field.summary.slice(0, 30) });
  if (field.type === 'number') return element('input', { name, type: 'number', step: 'any', required: field.required, placeholder: field.summary.slice(0, 30) });
  return element('input', { name, autocomplete: 'off', required: field.required, placeholder: field.summary.slice(0, 30) });
}
