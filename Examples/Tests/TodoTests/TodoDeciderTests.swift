import EventStoreTesting
import Testing
import Todo

/// The list's rules, as values: given these events, when this command, then these events.
@Suite("To-do rules")
struct TodoDeciderTests {
    let home = DeciderScenario(TodoDecider(list: "home"))
    let milk = TodoEvent.added(ItemAdded(item: "milk"))

    @Test("an item is added once")
    func adding() {
        home.when(.add("milk")).then(milk)
        home.given(milk).when(.add("milk")).thenThrows(TodoError.alreadyListed("milk"))
        home.when(.add("")).thenThrows(TodoError.emptyItem)
    }

    @Test("only an open item can be completed; a done item stays listed as done")
    func completing() {
        let done = TodoEvent.completed(ItemCompleted(item: "milk"))
        home.given(milk).when(.complete("milk")).then(done)
        home.given(milk, done).when(.complete("milk")).thenThrows(TodoError.notListed("milk"))
        home.given(milk, done).when(.add("milk")).thenThrows(TodoError.alreadyListed("milk"))
        home.given(milk, done).when(.add("bread")).thenState(TodoList(open: ["bread"], done: ["milk"]))
    }

    @Test("removing takes an item off, open or done")
    func removing() {
        let removed = TodoEvent.removed(ItemRemoved(item: "milk"))
        home.given(milk).when(.remove("milk")).then(removed)
        home.given(milk, .completed(ItemCompleted(item: "milk"))).when(.remove("milk")).thenState(TodoList())
        home.when(.remove("milk")).thenThrows(TodoError.notListed("milk"))
    }
}
