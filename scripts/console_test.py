"""The console's browser test, run by scripts/console-test.sh against a running `esctl serve`.

Drives the page in headless Chromium through Playwright (the Chrome DevTools Protocol) and checks
what the rendered DOM shows: the token dialog and the session, the header's head position, an
event appended by esctl from another process arriving in the tail, pause and resume, a chat
message said on the page reaching the store, the color keypad changing the display and the
background, a rebuild's progress and hash, the generic views (a command's form, a query's
fields, a table's rows: console_generic.py), the workout and the campground. Saves a screenshot of
each view. Fails on any check that does not hold within its timeout and on any error in the
browser's console or any uncaught exception in the page.
"""

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

from urllib.parse import urlsplit

from playwright.sync_api import expect, sync_playwright

from console_generic import browse_table, check_labels, query_with_fields, run, run_command
from console_proxy import DroppingProxy

# Every wait is bounded: the page answers within a second on a quiet machine; these leave room
# for a busy one.
TIMEOUT_MS = 15_000
# A projection's state hash: 64 lower-case hex digits.
STATE_HASH = re.compile(r"^[0-9a-f]{64}$")


def main() -> int:
    parser = argparse.ArgumentParser()
    for name in ("url", "token", "esctl", "store", "chromium", "screenshots"):
        parser.add_argument(f"--{name}", required=True)
    args = parser.parse_args()
    screenshots = Path(args.screenshots)
    expect.set_options(timeout=TIMEOUT_MS)

    def esctl(*arguments: str) -> str:
        done = subprocess.run(
            [args.esctl, *arguments, "--db", args.store], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
        if done.returncode != 0:
            raise AssertionError(f"esctl {' '.join(arguments)} exited {done.returncode}: {done.stderr.strip()}")
        return done.stdout

    def head() -> int:
        return json.loads(esctl("stats", "--json"))["headPosition"]

    # The browser reaches the server through a proxy that can cut its connections.
    served = urlsplit(args.url)
    proxy = DroppingProxy((served.hostname, served.port))
    url = f"http://127.0.0.1:{proxy.port}"
    problems: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=args.chromium, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        # While the test cuts the connections on purpose, the browser's own reports of the failed
        # reconnections are expected; nothing else is.
        offline = {"now": False}

        def on_console(message):
            if message.type != "error":
                return
            if offline["now"] and "net::ERR_" in message.text:
                return
            problems.append(f"console error: {message.text} at {message.location}")

        page.on("console", on_console)
        page.on("pageerror", lambda error: problems.append(f"uncaught exception in the page: {error}"))

        def step(name: str):
            print(f"console_test: {name}", file=sys.stderr)

        def show(view: str):
            page.goto(f"{url}/#{view}")
            expect(page.locator(f"#view-{view}"), f"the {view} view never showed").to_be_visible()
            expect(page.locator("body"), "the page never finished starting").to_have_attribute("data-ready", "true")

        def screenshot(name: str):
            page.screenshot(path=str(screenshots / f"{name}.png"), full_page=True)

        # Given a store with a few events written by esctl before the page opens.
        esctl("append", "orders-1", "OrderPlaced", "--data", '{"total": 42}')
        esctl("append", "orders-2", "OrderPlaced", "--data", '{"total": 7}', "--metadata", '{"by": "console-test"}')

        step("the page asks for the token, once, and opens a session with it")
        page.goto(url)
        dialog = page.locator("#token-dialog")
        expect(dialog, "the token dialog never opened").to_be_visible()
        page.locator("#token-input").fill(args.token)
        page.get_by_role("button", name="Open session").click()
        expect(dialog, "the token dialog never closed after the right token").to_be_hidden()
        expect(page.locator("body"), "the page never finished starting").to_have_attribute("data-ready", "true")

        step("the header shows the store and its head position")
        expect(page.locator("#head-position"), "the header never showed the head position").to_have_text(str(head()))
        expect(page.locator("#store-location"), "the header never showed the store's path").to_have_text(args.store)
        expect(page.locator("#event-count"), "the header never showed the event count").to_have_text("2")
        expect(page.locator("#connection"), "the tail never went live").to_have_attribute("data-state", "live")

        step("an event appended by esctl in another process arrives in the tail, first")
        esctl("append", "orders-3", "OrderShipped", "--data", '{"carrier": "owl"}')
        position = head()
        first = page.locator("#tail li button").first
        expect(first, "the event appended by esctl never reached the top of the tail").to_have_attribute("data-position", str(position))
        expect(page.locator("#head-position"), "the header's head never followed the append").to_have_text(str(position))
        first.click()
        expect(page.locator("#event-data"), "the event's data never showed").to_contain_text('"carrier": "owl"')
        expect(page.locator("#event-metadata"), "the event's metadata never showed").to_have_text("null")

        step("pause holds new events back, resume shows them")
        page.get_by_role("button", name="Pause").click()
        esctl("append", "audit-1", "Checked")
        paused_position = head()
        expect(page.locator("#tail-waiting"), "the paused tail never counted the waiting event").to_have_text("1 new event waiting")
        expect(page.locator(f'#tail button[data-position="{paused_position}"]'), "a paused tail showed a new event").to_have_count(0)
        page.get_by_role("button", name="Resume").click()
        expect(page.locator("#tail li button").first, "resume never showed the waiting event").to_have_attribute("data-position", str(paused_position))

        step("the tail is one tab stop; the arrow keys move within it")
        rows = page.locator("#tail li button")
        expect(page.locator('#tail button[tabindex="0"]'), "the tail is not exactly one tab stop").to_have_count(1)
        rows.nth(0).focus()
        page.keyboard.press("ArrowDown")
        second = rows.nth(1).get_attribute("data-position")
        if page.evaluate("document.activeElement.dataset.position") != second:
            raise AssertionError("ArrowDown did not move the focus to the next event")
        expect(page.locator('#tail button[tabindex="0"]'), "moving left more than one tab stop").to_have_count(1)

        step("a dropped connection resumes where it stopped: no event missed, none twice")
        offline["now"] = True
        proxy.drop()
        expect(page.locator("#connection"), "the tail never noticed the dropped connection").not_to_have_attribute("data-state", "live")
        esctl("append", "audit-2", "Checked")
        esctl("append", "audit-3", "Checked")
        missed = head()
        proxy.restore()
        expect(page.locator("#connection"), "the tail never went live again").to_have_attribute("data-state", "live")
        offline["now"] = False
        expect(page.locator("#tail li button").first, "the events appended while offline never arrived").to_have_attribute("data-position", str(missed))
        if not proxy.resumed:
            raise AssertionError("the browser reconnected without Last-Event-ID")
        shown = page.locator("#tail li button").evaluate_all("buttons => buttons.map(button => Number(button.dataset.position))")
        if shown != list(range(missed, 0, -1)):
            raise AssertionError(f"after the reconnection the tail shows {shown}, not every position from {missed} down to 1 once")

        step("the category filter keeps one category's events")
        page.locator("#tail-category").select_option("orders")
        expect(page.locator("#tail li"), "the filter never kept only the 3 order events").to_have_count(3)
        page.locator("#tail-category").select_option("")
        expect(page.locator("#tail li"), "clearing the filter never brought all 6 events back").to_have_count(6)
        expect(page.locator("#rate-chart rect"), "the events-per-second chart drew no bar").not_to_have_count(0)
        screenshot("log")

        step("a chat message said on the page reaches the store")
        show("chat")
        page.locator("#chat-user").fill("Ada")
        page.locator("#chat-text").fill("Hello from the console")
        page.get_by_role("button", name="Say").click()
        expect(page.locator("#chat-messages"), "the said message never showed in the room").to_contain_text("Hello from the console")
        stored = [json.loads(line) for line in esctl("read", "chat-default", "--json").splitlines() if line.strip()]
        said = [event["data"] for event in stored if event["type"] == "MessagePosted"]
        if not any(data.get("user") == "Ada" and data.get("text") == "Hello from the console" for data in said):
            raise AssertionError(f"esctl read chat-default does not hold Ada's message: {said}")
        step("a message said by esctl arrives on the page live")
        esctl("chat", "say", "--user", "Grace", "Hello from the shell")
        expect(page.locator("#chat-messages"), "a message said by esctl never arrived live").to_contain_text("Hello from the shell")
        screenshot("chat")

        step("a key pressed on the keypad changes the display and the background")
        show("color")
        panel = page.locator("#color-panel")
        expect(page.locator("#color-display"), "the calculator never showed its starting display").to_have_text("#0080FF")
        expect(page.locator("#color-name"), "the starting color's name never showed").to_have_text("aqua 100%")
        before = panel.evaluate("element => getComputedStyle(element).backgroundColor")
        page.get_by_role("button", name="Key 6").click()
        expect(page.locator("#color-display"), "pressing 6 never changed the display").to_have_text("#0080FF6")
        page.get_by_role("button", name="Key 6").click()
        expect(page.locator("#color-display"), "pressing 6 again never changed the display").to_have_text("#0080FF66")
        expect(page.locator("#color-values"), "the values never followed the display").to_have_text("0, 128, 255, 102")
        expect(panel, "the background never took the color").to_have_attribute("data-color", "0,128,255,102")
        after = panel.evaluate("element => getComputedStyle(element).backgroundColor")
        page.keyboard.press("Backspace")
        expect(page.locator("#color-display"), "Backspace on the keyboard never removed a digit").to_have_text("#0080FF6")
        page.keyboard.press("6")
        expect(page.locator("#color-display"), "6 on the keyboard never added a digit").to_have_text("#0080FF66")
        if after == before:
            raise AssertionError(f"the background did not change: {before} before, {after} after")
        screenshot("color")

        step("a rebuild shows its progress and ends with the same hash")
        show("projections")
        row = page.locator('#projections tr[data-name="count-by-type"]')
        hash_cell = row.locator("td.hash")
        expect(hash_cell, "the projection's hash never showed").to_have_text(STATE_HASH)
        # The serving state, caught up with the head by the server's live projections.
        expect(row.locator("td").nth(1), "the projection's checkpoint never reached the head").to_have_text(str(head()))
        expect(row.locator("td").nth(2), "the projection's lag never showed 0").to_have_text("0")
        hash_before = hash_cell.inner_text()
        row.get_by_role("button", name="Rebuild count-by-type").click()
        note = row.locator("output")
        expect(note, "the rebuild never finished").to_have_attribute("data-state", "done")
        expect(note, "the rebuild did not end with the same hash").to_contain_text("hash unchanged")
        progress = row.locator("progress")
        expect(progress, "the rebuild's progress bar never showed").to_be_visible()
        if progress.evaluate("bar => bar.value !== bar.max"):
            raise AssertionError("the rebuild's progress bar did not end full")
        expect(hash_cell, "the hash changed after the rebuild").to_have_text(hash_before)
        page.locator("#query-name").select_option("count-by-type")
        page.get_by_role("button", name="Query").click()
        expect(page.locator("#query-result"), "the query result never showed").to_contain_text("OrderPlaced")
        esctl("append", "orders-4", "OrderRefunded")
        expect(page.locator("#query-result"), "the query result never refreshed as an event arrived").to_contain_text("OrderRefunded")
        expect(page.locator("#lag-chart polyline"), "the lag chart drew no line").not_to_have_count(0)
        screenshot("projections")

        step("the generic views: a command's form, a projection's query fields, a table's rows")
        show("commands")
        run_command(page, "/apps/fitness/goal", {"user": "generic", "steps": "321"}, '"stream": "fitness-generic"')
        screenshot("commands")
        show("projections")
        query_with_fields(page, "app-state", {"user": "generic"}, '"goal": 321')
        browse_table(page, "app-state", "workouts", "generic")
        screenshot("generic")

        step("the workout: a goal, start, steps, Nessie, and the alert queue")
        show("workout")
        page.locator("#goal-steps").fill("500")
        page.get_by_role("button", name="Set goal").click()
        expect(page.locator("#workout-goal"), "the goal never showed").to_have_text("500 steps")
        page.get_by_role("button", name="Start", exact=True).click()
        expect(page.locator("#workout-state"), "the workout never started").to_have_text("inProgress")
        expect(page.locator("#workout-button"), "the button never said Pause").to_have_text("Pause")
        page.get_by_role("button", name="Walk").click()
        expect(page.locator("#workout-steps"), "the steps never showed").to_have_text("100")
        expect(page.locator("#workout-distance"), "the distance never showed").to_have_text("70 m")
        page.locator("#nessie-meters").fill("30")
        page.get_by_role("button", name="Move Nessie").click()
        expect(page.locator("#workout-nessie"), "Nessie's distance never showed").to_have_text("30 m")
        page.locator("#alert-text").fill("Drink water")
        page.get_by_role("button", name="Post alert").click()
        expect(page.locator("#alerts"), "the alert never reached the queue").to_contain_text("Drink water")
        screenshot("workout")
        page.locator("#workout-user").fill("bob")
        page.locator("#workout-user").press("Enter")
        expect(page.locator("#workout-goal"), "Enter in the user field never showed bob's workout").to_have_text("none")
        expect(page.locator("#workout-user"), "Enter in the user field reloaded the page").to_have_value("bob")
        page.locator("#workout-user").fill("default")
        page.locator("#workout-user").press("Enter")
        expect(page.locator("#workout-goal"), "the default user's workout never came back").to_have_text("500 steps")

        step("the campground: a camper, a site and a reservation")
        show("camp")
        page.locator("#camper-name").fill("Johnny Appleseed")
        page.locator("#camper-phone").fill("408-555-1234")
        page.get_by_role("button", name="Add camper").click()
        expect(page.locator("#camp-campers"), "the camper never showed").to_contain_text("Johnny Appleseed")
        page.locator("#site-number").fill("15")
        page.get_by_role("button", name="Add site").click()
        expect(page.locator("#camp-sites"), "the site never showed").to_contain_text("15")
        expect(page.locator("#reserve-camper option"), "the camper never became a choice").to_have_count(1)
        page.locator("#reserve-date").fill("2026-12-01")
        page.locator("#reserve-nights").fill("3")
        page.get_by_role("button", name="Reserve").click()
        expect(page.locator("#camp-reservations"), "the reservation never showed as Reserved").to_contain_text("Reserved")
        expect(page.locator("#camp-reservations"), "the reservation's end date is not 3 nights later").to_contain_text("2026-12-04")
        screenshot("camp")

        step("at a phone's width the page fits without scrolling sideways")
        page.set_viewport_size({"width": 390, "height": 844})
        for view in ("projections", "commands", "workout", "chat", "camp", "color", "log"):
            show(view)
            width = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
            if width > 1:
                raise AssertionError(f"at 390 px the {view} view is {width} px wider than the window")
        screenshot("log-phone")

        step("the log after all of it (the README's screenshot, docs/console.png)")
        page.set_viewport_size({"width": 1280, "height": 800})
        show("log")
        page.locator("#tail li button").first.click()
        expect(page.locator("#event-data"), "the reservation's data never showed").to_contain_text('"status": "Reserved"')
        page.screenshot(path=str(screenshots / "overview.png"))

        expect(page.locator("#page-error"), "the page still shows an error").to_be_hidden()

        step("every control has a label")
        check_labels(page)

        step("the browser asked for the icon and got it")
        icon = page.request.get(f"{url}/favicon.ico")
        if icon.status != 200:
            raise AssertionError(f"GET /favicon.ico answered {icon.status}")
        browser.close()

    if problems:
        for problem in problems:
            print(f"console_test: {problem}", file=sys.stderr)
        return 1
    print(f"console_test: every check held; screenshots in {screenshots}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    run("console_test", main)
