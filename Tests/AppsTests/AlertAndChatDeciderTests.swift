import Apps
import Commands
import Testing
import TestSupport

@Suite("Alert queue and chat rules")
struct AlertAndChatDeciderTests {
    let alerts = DeciderScenario(AlertDecider(user: "ann"))
    let hello = AlertEvent.posted(AlertPosted(alert: Alert(name: nil, text: "Hello", severity: .good)))
    let milestone = AlertEvent.posted(AlertPosted(alert: AlertName.milestone25Percent.alert))

    @Test("a free-text alert is posted once; posting the same text again records nothing; an empty or too long text is refused")
    func posting() {
        alerts.when(.post(text: "Hello", severity: .good)).then(hello)
        alerts.given(hello).when(.post(text: "Hello", severity: .bad)).thenNothing()
        alerts.when(.post(text: "  ", severity: .good)).thenRefused(.invalidInput, "The alert text is empty; give some text.")
        let long = String(repeating: "é", count: AppLimits.maximumTextCharacters + 1)
        alerts.when(.post(text: long, severity: .good)).thenRefused(.invalidInput, "The alert text is 4001 characters long; the limit is 4000.")
        let longest = String(repeating: "é", count: AppLimits.maximumTextCharacters)
        alerts.when(.post(text: longest, severity: .good)).then(.posted(AlertPosted(alert: Alert(text: longest, severity: .good))))
    }

    @Test("clearing one alert by name or text removes it; clearing one not queued is not found, naming the read model that lists them")
    func clearing() {
        let both = alerts.given(hello, milestone)
        both.when(.clear("milestone25Percent")).then(.cleared(AlertCleared(text: AlertName.milestone25Percent.text)))
        both.when(.clear("Hello")).then(.cleared(AlertCleared(text: "Hello")))
        both.when(.clear("Bye")).thenThrows(AppError(.notFound, "No alert 'Bye' is queued.", listedBy: "alerts"))
        both.when(.clearAll).then(.allCleared(AllAlertsCleared()))
        alerts.when(.clearAll).thenNothing()
    }

    @Test("a free-text alert that reads like a built-in name is cleared by its text")
    func nameLikeText() {
        let named = AlertEvent.posted(AlertPosted(alert: Alert(text: "goalComplete", severity: .bad)))
        alerts.given(named).when(.clear("goalComplete")).then(.cleared(AlertCleared(text: "goalComplete")))
    }

    @Test("the queue keeps the order posted, with a count, a top and a next-up; clearing all empties it")
    func queueShape() {
        let bye = AlertEvent.posted(AlertPosted(alert: Alert(text: "Bye", severity: .bad)))
        var state = alerts.given(hello, milestone, bye, hello).state
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
    func chat() {
        let ann = DeciderScenario(ChatDecider(room: "lobby", user: "ann"))
        ann.when(.say("hi")).then(.message(MessagePosted(user: "ann", text: "hi", kind: .said)))
        ann.when(.shareLocation("1 Infinite Loop")).then(.message(MessagePosted(user: "ann", text: "📍 1 Infinite Loop", kind: .location)))
        ann.when(.presence(.connected)).then(.presence(PresenceChanged(user: "ann", presence: .connected)))
        #expect(ann.when(.presence(.connected)).events()?.map(\.shown.text) == ["ann connected"])
        #expect(ann.when(.presence(.wentAway)).events()?.map(\.shown.text) == ["ann went away"])
        #expect(ann.when(.presence(.cameBack)).events()?.map(\.shown.text) == ["ann came back"])
        ann.when(.say("")).thenRefused(.invalidInput, "The message is empty; give some text.")
        DeciderScenario(ChatDecider(room: "lobby", user: "")).when(.say("hi")).thenRefused(.invalidInput, "The user is empty; give a user name.")
        DeciderScenario(ChatDecider(room: "", user: "ann")).when(.say("hi")).thenRefused(.invalidInput, "The room is empty; give a room name.")
        #expect(ChatDecider.countdown(to: "Tada!") == ["3...", "2...", "1...", "🎉 Tada!"])
    }
}
