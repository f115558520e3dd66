import Apps
import AppsServer
import ArgumentParser
import EsctlCommands
import HTTPServer

/// What the seed apps add to `esctl serve`: `--chat-room`, the room of the chat's own protocol,
/// and every seed app's console view.
public struct SeedServeOptions: ServeExtras {
    @Option(name: .customLong("chat-room"), help: ArgumentHelp("The chat room of /chat/room and /chat/say.", valueName: "NAME"))
    var chatRoom: String = AppStreams.defaultKey

    public init() {}

    public func serverParts() -> [any AppServerParts] {
        SeedServerParts.all(chatRoom: chatRoom)
    }
}
