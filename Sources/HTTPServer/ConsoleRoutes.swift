import Hummingbird
import NIOCore

extension Server {
    /// The console: `GET /` (and `/index.html`) serves the page, `GET /console/{file}` its styles,
    /// scripts and icon, `GET /favicon.ico` the icon, `GET /console/views.json` the list of the
    /// served modules' views and `GET /console/views/{file}` their scripts and styles. All ship
    /// inside the binary (see ``ConsoleAssets``) and are open without the token: they hold no
    /// data, and the page asks for the token itself before it reads anything.
    func addConsoleRoutes(to router: Router<ServerContext>) {
        router.get("/") { _, _ in ConsoleAssets.page.response }
        router.get("/index.html") { _, _ in ConsoleAssets.page.response }
        router.get("/favicon.ico") { _, _ in ConsoleAssets.icon.response }
        let files = ConsoleAssets.files.merging(["views.json": ConsoleAssets.viewList(consoleViews)]) { own, _ in own }
        router.get("/console/{file}") { _, context -> Response in
            let name = try context.pathParameter("file")
            guard let file = files[name] else {
                throw ServerError(.notFound, "The console has no file '\(name.prefix(80))'.")
            }
            return file.response
        }
        let viewFiles = ConsoleAssets.viewFiles(consoleViews)
        router.get("/console/views/{file}") { _, context -> Response in
            let name = try context.pathParameter("file")
            guard let file = viewFiles[name] else {
                throw ServerError(.notFound, "The console has no view file '\(name.prefix(80))'.")
            }
            return file.response
        }
    }
}

extension ConsoleAssets.File {
    /// 200 with the bytes. The page may run scripts and styles from this server only, and the
    /// browser revalidates on every load, so a new esctl never serves yesterday's script.
    var response: Response {
        Response(
            status: .ok,
            headers: [
                .contentType: contentType, .cacheControl: "no-cache",
                .contentSecurityPolicy: "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'",
                .xContentTypeOptions: "nosniff",
            ],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}
