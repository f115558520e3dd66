import EventStoreCore

/// The chat events decoded by hand, from their data as readers see it (personal data opened),
/// for the shapes the app writes (`{"user":U,"text":T,"kind":K}`, `{"user":U,"presence":P}`,
/// members in any order, others ignored); anything else through ``init(recorded:)``, a forgotten
/// text above all (`ChatEventBytesTests` holds the two paths together).
extension ChatEvent: HandDecodedEvent {
    /// The event when the hand-written path takes its data; nil to leave it to `Decodable`.
    public static func decodedByHand(_ view: EventView) -> ChatEvent? {
        let type = view.typeUTF8
        if type.elementsEqual(MessagePosted.eventType.utf8) {
            var fields = FieldValues(["user", "text", "kind"])
            guard fields.read(view.data), let user = fields.string(0), let text = fields.string(1),
                let kind = fields.string(2).flatMap(MessageKind.init(rawValue:))
            else { return nil }
            return .message(MessagePosted(user: user, text: text, kind: kind))
        }
        if type.elementsEqual(PresenceChanged.eventType.utf8) {
            var fields = FieldValues(["user", "presence"])
            guard fields.read(view.data), let user = fields.string(0), let presence = fields.string(1).flatMap(Presence.init(rawValue:)) else {
                return nil
            }
            return .presence(PresenceChanged(user: user, presence: presence))
        }
        return nil
    }
}
