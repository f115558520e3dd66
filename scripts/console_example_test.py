"""The console of the example backend (Examples/Lending's lendctl), run by
scripts/example-backend.sh against a running `lendctl serve`.

Drives the page in headless Chromium through Playwright and checks that a build with an app of
its own and none of the seed apps gets the console's generic views only: the menu has no view of
the seed apps, the Commands view runs the lending module's commands from forms built from their
declared fields, the shelf projection answers its query form, and its tables show their rows.
Fails on any check that does not hold within its timeout and on any error in the browser's
console or any uncaught exception in the page.
"""

import argparse
import json
import sys
import urllib.request

from playwright.sync_api import expect, sync_playwright

from console_generic import browse_table, check_labels, query_with_fields, run, run_command

TIMEOUT_MS = 15_000


def main() -> int:
    parser = argparse.ArgumentParser()
    for name in ("url", "chromium"):
        parser.add_argument(f"--{name}", required=True)
    args = parser.parse_args()
    url = args.url
    expect.set_options(timeout=TIMEOUT_MS)
    problems: list[str] = []

    def step(name: str):
        print(f"console_example_test: {name}", file=sys.stderr)

    step("the server lists no console view: the example has none of its own")
    with urllib.request.urlopen(f"{url}/console/views.json", timeout=30) as response:
        views = json.loads(response.read())
    if views != {"views": []}:
        raise AssertionError(f"/console/views.json is {views}, not no view")

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=args.chromium, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        # The one refusal the test asks for is reported by the browser as a failed load; nothing else may be.
        refusing = {"now": False}

        def on_console(message):
            if message.type == "error" and not (refusing["now"] and "status of 422" in message.text):
                problems.append(f"console error: {message.text}")

        page.on("console", on_console)
        page.on("pageerror", lambda error: problems.append(f"uncaught exception in the page: {error}"))

        def show(view: str):
            page.goto(f"{url}/#{view}")
            expect(page.locator(f"#view-{view}"), f"the {view} view never showed").to_be_visible()
            expect(page.locator("body"), "the page never finished starting").to_have_attribute("data-ready", "true")

        step("the menu has the console's own views only")
        show("log")
        expect(page.locator("#views-nav a"), "the menu is not Log, Projections, Commands").to_have_text(["Log", "Projections", "Commands"])
        for seed in ("workout", "chat", "camp", "color"):
            expect(page.locator(f"#view-{seed}"), f"the page has the seed view {seed}").to_have_count(0)

        step("the Commands view runs the lending module's commands")
        show("commands")
        commands = ["/apps/lending/add-book", "/apps/lending/lend", "/apps/lending/return"]
        expect(page.locator("#command-forms form"), "the Commands view does not have the lending commands").to_have_count(len(commands))
        shown = page.locator("#command-forms form").evaluate_all("forms => forms.map(form => form.dataset.command)")
        if shown != commands:
            raise AssertionError(f"the Commands view has forms for {shown}, not {commands}")
        run_command(page, "/apps/lending/add-book", {"isbn": "978-1", "title": "Middlemarch"}, '"type": "BookAdded"')
        run_command(page, "/apps/lending/lend", {"isbn": "978-1", "member": "eve"}, '"type": "BookLent"')
        refusing["now"] = True
        form = page.locator('form[data-command="/apps/lending/lend"]')
        form.get_by_role("button", name="Run /apps/lending/lend").click()
        expect(page.locator("#command-error"), "a second lend was not refused").to_contain_text("lent to eve")
        expect(page.locator("#command-result"), "the refusal's code never showed").to_contain_text('"code": "notAvailable"')
        refusing["now"] = False

        step("the shelf answers its query form, and its tables show their rows")
        show("projections")
        expect(page.locator('#projections tr[data-name="shelf"]'), "the shelf is not listed").to_have_count(1)
        query_with_fields(page, "shelf", {"member": "eve"}, "Middlemarch")
        browse_table(page, "shelf", "books", "Middlemarch")

        step("every control has a label")
        check_labels(page)
        expect(page.locator("#page-error"), "the page shows an error").to_be_hidden()
        browser.close()

    if problems:
        for problem in problems:
            print(f"console_example_test: {problem}", file=sys.stderr)
        return 1
    print("console_example_test: every check held", file=sys.stderr)
    return 0


if __name__ == "__main__":
    run("console_example_test", main)
