// The canonical JSON form is the core's: an event's data, a read model's rows and every error's
// details are written in it. It lives in a module of its own (it knows nothing of events) and is
// re-exported, so that `import EventStoreCore` gives `JSONValue` as before.
@_exported import EventStoreJSON
