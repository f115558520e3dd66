import EventStoreCore

/// The alert events decoded by hand for the shapes the apps write (`{"name":N,"text":T,
/// "severity":S}` with the name null or absent for free text, `{"text":T}`, `{}`, members in any
/// order, others ignored); anything else through ``init(recorded:)`` (`AlertEventBytesTests`
/// holds the two paths together).
extension AlertEvent: HandDecodedEvent {
    /// The event when the hand-written path takes its data; nil to leave it to `Decodable`.
    public static func decodedByHand(_ view: EventView) -> AlertEvent? {
        let type = view.typeUTF8
        if type.elementsEqual(AlertPosted.eventType.utf8) {
            var fields = FieldValues(["name", "text", "severity"])
            guard fields.read(view.data), let text = fields.string(1), let severity = fields.string(2).flatMap(Severity.init(rawValue:)) else {
                return nil
            }
            var name: AlertName?
            if !fields.isMissingOrNull(0) {
                guard let known = fields.string(0).flatMap(AlertName.init(rawValue:)) else { return nil }
                name = known
            }
            return .posted(AlertPosted(alert: Alert(name: name, text: text, severity: severity)))
        }
        if type.elementsEqual(AlertCleared.eventType.utf8) {
            var fields = FieldValues(["text"])
            guard fields.read(view.data), let text = fields.string(0) else { return nil }
            return .cleared(AlertCleared(text: text))
        }
        if type.elementsEqual(AllAlertsCleared.eventType.utf8), view.data.elementsEqual("{}".utf8) { return .allCleared(AllAlertsCleared()) }
        return nil
    }
}
