import Hummingbird
import NIOCore

extension Server {
    /// `GET /openapi.yaml`: the OpenAPI 3.1 document of every route this server serves (its
    /// generic part and its apps' parts, ``OpenAPIDocument``), as `application/yaml`.
    func addOpenAPIRoutes(to router: Router<ServerContext>) {
        router.get("/openapi.yaml") { _, _ -> Response in
            Response(
                status: .ok, headers: [.contentType: "application/yaml; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: self.openAPI)))
        }
    }
}
