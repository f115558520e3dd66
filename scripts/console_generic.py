"""The console's generic views, checked the same way on any build (the shipped esctl's and the
example's): the Commands view's forms built from the commands' declared fields, a projection's
query form built from its declared parameters, and a table's rows a page at a time. Imported by
console_test.py (the demo build) and console_example_test.py (the example's build).
"""

import sys
import time

from playwright.sync_api import expect


def run_command(page, path: str, fields: dict[str, str], answer_contains: str):
    """Fills the form of the command at `path` on the Commands view and runs it; the answer
    shown must contain `answer_contains`."""
    form = page.locator(f'form[data-command="{path}"]')
    expect(form, f"the Commands view has no form for {path}").to_be_visible()
    for name, value in fields.items():
        control = form.locator(f'[name="{name}"]')
        if control.evaluate("element => element.tagName") == "SELECT":
            control.select_option(value)
        else:
            control.fill(value)
    form.get_by_role("button", name=f"Run {path}").click()
    expect(page.locator("#command-result"), f"the answer of {path} never showed {answer_contains!r}").to_contain_text(answer_contains)
    expect(page.locator("#command-error"), f"{path} was refused").to_be_hidden()


def query_with_fields(page, projection: str, parameters: dict[str, str], result_contains: str):
    """Chooses `projection` on the Projections view, fills its declared parameters' fields and
    queries; the result must contain `result_contains`."""
    page.locator("#query-name").select_option(projection)
    expect(page.locator("#query-fields"), f"the query form never turned to {projection}").to_have_attribute("data-projection", projection)
    for name, value in parameters.items():
        field = page.locator(f'#query-fields input[name="{name}"]')
        expect(field, f"the query form of {projection} never got a field '{name}'").to_be_visible()
        field.fill(value)
    page.get_by_role("button", name="Query").click()
    expect(page.locator("#query-result"), f"the query of {projection} never showed {result_contains!r}").to_contain_text(result_contains)


def browse_table(page, projection: str, table: str, row_contains: str):
    """Shows the first page of `projection`'s `table` (chosen on the Projections view); a row
    must contain `row_contains`."""
    page.locator("#query-name").select_option(projection)
    expect(page.locator("#table-name"), f"the tables never turned to {projection}'s").to_have_attribute("data-projection", projection)
    choice = page.locator(f'#table-name option[value="{table}"]')
    expect(choice, f"the tables of {projection} never listed {table}").to_have_count(1)
    page.locator("#table-name").select_option(table)
    page.get_by_role("button", name="Show rows").click()
    expect(page.locator("#table-rows tbody"), f"the rows of {projection}/{table} never showed {row_contains!r}").to_contain_text(row_contains)


def check_labels(page):
    """Every input, choice and button has a label (its own text, a <label> or aria-label)."""
    unlabelled = page.evaluate("""() => [...document.querySelectorAll('input, select, button')]
        .filter(control => !(control.labels && control.labels.length) && !control.getAttribute('aria-label') && !control.textContent.trim())
        .map(control => control.outerHTML)""")
    if unlabelled:
        raise AssertionError(f"controls without a label: {unlabelled}")


def run(name: str, main):
    """Runs a browser test's `main` and exits with its status: 1 when a check failed, saying which."""
    start = time.monotonic()
    try:
        code = main()
    except AssertionError as failure:
        print(f"{name}: FAILED: {failure}", file=sys.stderr)
        code = 1
    print(f"{name}: {time.monotonic() - start:.1f} s", file=sys.stderr)
    sys.exit(code)
