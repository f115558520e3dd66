import Apps
import Testing

@Suite("The chat room's rule of activity, shared by the messages projection and the chat protocol")
struct ChatActivityTests {
    let now: Int64 = 1_000_000_000_000
    let window = MessagesProjection.activeWindow

    @Test("posting, connecting and coming back are being present; going away is not")
    func sightings() {
        let posted = ChatEvent.message(MessagePosted(user: "ann", text: "hi", kind: .said))
        #expect(posted.sighting(at: 5).user == "ann")
        #expect(posted.sighting(at: 5).seen == LastSeen(at: 5, isAway: false))
        for presence in [Presence.connected, .cameBack] {
            let event = ChatEvent.presence(PresenceChanged(user: "bob", presence: presence))
            #expect(event.sighting(at: 7).seen == LastSeen(at: 7, isAway: false), "\(presence)")
        }
        let away = ChatEvent.presence(PresenceChanged(user: "bob", presence: .wentAway))
        #expect(away.sighting(at: 7).seen == LastSeen(at: 7, isAway: true))
    }

    @Test("active: seen within 300 s before now (the edge included) and not away; never on overflow")
    func activity() {
        #expect(LastSeen(at: now, isAway: false).isActive(asOf: now))
        #expect(LastSeen(at: now - window, isAway: false).isActive(asOf: now), "exactly 300 s ago is still active")
        #expect(!LastSeen(at: now - window - 1, isAway: false).isActive(asOf: now), "older than 300 s")
        #expect(!LastSeen(at: now, isAway: true).isActive(asOf: now), "went away")
        #expect(LastSeen(at: now, isAway: true).isRecent(asOf: now), "going away is recent all the same")
        #expect(!LastSeen(at: .min, isAway: false).isActive(asOf: .max), "an age that overflows is not recent")
        #expect(LastSeen(at: now + 5, isAway: false).isActive(asOf: now), "a sighting after now (a clock set back) counts")
    }
}
