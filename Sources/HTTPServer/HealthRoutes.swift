import EventStoreCore
import Foundation
import NIOCore
import NIOFoundationCompat
import Hummingbird
import WireFormat

extension Server {
    /// `GET /health`: 200 `{"status":"ok","head":N,"authorized":B,"readOnly":B}` while the store
    /// answers (open without the token). `authorized` says whether this request carries the
    /// token's rights (true when the server has no token), so the console knows to ask for it
    /// before it reads anything; `readOnly`, whether the store is served for reading only.
    func addHealthRoutes(to router: Router<ServerContext>) {
        router.get("/health") { request, _ -> Response in
            let head = try await self.store.headPosition()
            var object = JSONObjectWriter()
            object.add("status", "ok")
            object.add("head", head)
            object.add("authorized", AuthorizationMiddleware.isAuthorized(request, token: self.options.token, session: self.session))
            object.add("readOnly", self.store.mode == .readOnly)
            return ErrorResponses.body(.ok, object.finish())
        }
    }

    /// `POST /session` with the token (as `Authorization: Bearer`, or `{"token": T}`): 204 and
    /// the session cookie (HttpOnly, SameSite=Strict) that carries the token's rights for a
    /// browser, whose EventSource cannot send headers. Without a server token: 204, no cookie.
    func addSessionRoutes(to router: Router<ServerContext>) {
        router.post("/session") { request, context -> Response in
            guard let token = self.options.token else { return Response(status: .noContent) }
            var request = request
            var presented = AuthorizationMiddleware.bearer(request)
            if presented == nil {
                let body = try await request.collectBody(context)
                presented = SessionRequest.token(in: body)
            }
            // Checked and counted in one step after the body, so that guesses whose bodies
            // arrive together cannot all pass the check before any of them is counted.
            let right = presented.map { ConstantTime.equal($0, token) } ?? false
            try self.tokenThrottle.admit(context.clientAddress, guessed: presented != nil, right: right)
            guard right else {
                throw ServerError(.unauthorized, "The token is wrong or missing: send {\"token\": TOKEN} or `Authorization: Bearer TOKEN`.")
            }
            var response = Response(status: .noContent)
            // Secure over HTTPS: a browser never sends it back in clear text.
            response.setCookie(
                Cookie(
                    name: SessionKey.cookieName, value: self.session.value, path: "/", secure: self.options.usesTLS, httpOnly: true,
                    sameSite: .strict))
            return response
        }
    }
}

/// The body of `POST /session`.
enum SessionRequest {
    struct Body: Decodable { let token: String }

    /// The token of `{"token": T}`, or nil when the body is not that.
    static func token(in body: ByteBuffer) -> String? {
        try? JSONDecoder().decode(Body.self, from: Data(buffer: body)).token
    }
}
