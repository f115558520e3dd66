import Commands
import Projections
import Testing

@Suite("Alert queue and chat rules")
struct AlertAndChatDeciderTests {
    func queue(_ events: [AlertEvent]) -> AlertQueue {
        var queue = AlertQueue()
        events.forEach { queue.apply($0) }
        return queue
    }

    let hello = AlertEvent.posted(AlertPosted(alert: Alert(name: nil, text: "Hello", severity: .good)))
    let milestone = AlertEvent.posted(AlertPosted(alert: AlertName.milestone25Percent.alert))

    @Test("a free-text alert is posted once; posting the same text again records nothing")
    func posting() throws {
        #expect(try AlertDecider.decide(.post(text: "Hello", severity: .good), queue: queue([])) == [hello])
        #expect(try AlertDecider.decide(.post(text: "Hello", severity: .bad), queue: queue([hello])) == [])
        #expect(throws: CommandError.self) { try AlertDecider.decide(.post(text: "  ", severity: .good), queue: queue([])) }
    }

    @Test("clearing one alert by name or text removes it; clearing one not queued is not found")
    func clearing() throws {
        let both = queue([hello, milestone])
        #expect(try AlertDecider.decide(.clear("milestone25Percent"), queue: both) == [.cleared(AlertCleared(text: AlertName.milestone25Percent.text))])
        #expect(try AlertDecider.decide(.clear("Hello"), queue: both) == [.cleared(AlertCleared(text: "Hello"))])
        #expect(throws: CommandError(.notFound, "No alert 'Bye' is queued; `esctl query alerts` (with the same --user) lists the queue.")) {
            try AlertDecider.decide(.clear("Bye"), queue: both)
        }
        #expect(try AlertDecider.decide(.clearAll, queue: both) == [.allCleared(AllAlertsCleared())])
        #expect(try AlertDecider.decide(.clearAll, queue: queue([])) == [])
    }

    @Test("the queue keeps the order posted, with a count, a top and a next-up; clearing all empties it")
    func queueShape() {
        let bye = AlertEvent.posted(AlertPosted(alert: Alert(text: "Bye", severity: .bad)))
        var state = queue([hello, milestone, bye, hello])
        #expect(state.alerts.map(\.text) == ["Hello", AlertName.milestone25Percent.text, "Bye"])
        #expect(state.count == 3 && state.top?.text == "Hello" && state.nextUp?.text == AlertName.milestone25Percent.text)
        state.apply(.cleared(AlertCleared(text: "Hello")))
        #expect(state.top?.text == AlertName.milestone25Percent.text && state.nextUp?.text == "Bye")
        state.apply(.allCleared(AllAlertsCleared()))
        #expect(state.count == 0 && state.top == nil && state.nextUp == nil)
    }

    @Test("the alert table: texts and severities")
    func alertTable() {
        #expect(AlertName.allCases.map(\.text) == [
            "You are 25% to goal. Keep going!", "Woohoo! You're halfway there!", "Almost there, you can do it!",
            "Amazing, you did it! Have some 🥧.", "Nessie catching up halfway 🦕.", "Nessie almost has you 🦕!", "Caught By Nessie!",
        ])
        #expect(AlertName.allCases.map(\.severity) == [.good, .good, .good, .good, .bad, .bad, .bad])
    }

    @Test("chat: say, share a location, presence; empty texts and users are refused")
    func chat() throws {
        #expect(try ChatDecider.decide(.say("hi"), user: "ann") == .message(MessagePosted(user: "ann", text: "hi", kind: .said)))
        #expect(try ChatDecider.decide(.shareLocation("1 Infinite Loop"), user: "ann") == .message(MessagePosted(user: "ann", text: "📍 1 Infinite Loop", kind: .location)))
        #expect(try ChatDecider.decide(.presence(.connected), user: "ann").shown == (nil, "ann connected"))
        #expect(try ChatDecider.decide(.presence(.wentAway), user: "ann").shown == (nil, "ann went away"))
        #expect(try ChatDecider.decide(.presence(.cameBack), user: "ann").shown == (nil, "ann came back"))
        #expect(throws: CommandError.self) { try ChatDecider.decide(.say(""), user: "ann") }
        #expect(throws: CommandError.self) { try ChatDecider.decide(.say("hi"), user: "") }
        #expect(ChatDecider.countdown(to: "Tada!") == ["3...", "2...", "1...", "🎉 Tada!"])
    }
}
