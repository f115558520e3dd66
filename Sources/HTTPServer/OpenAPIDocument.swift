// Written by scripts/openapi-swift.sh from docs/openapi.yaml: do not edit; edit that file and run the script.

/// The OpenAPI 3.1 document of the API, served at `GET /openapi.yaml`.
enum OpenAPIDocument {
    /// The text of docs/openapi.yaml.
    static let text = ##"""
openapi: 3.1.0
info:
  title: esctl serve
  version: "1"
  summary: The event store over HTTP - the log, live streams, read models, the apps' commands, the chat app's own protocol and a web console.
  description: |
    The API of `esctl serve` (docs/http.md). Every error is JSON
    `{"error": "one sentence", "code": "..."}` with a fitting status, and nothing is written when
    a request fails. Events are the objects of `esctl replay --json`. With a token (`--token` or
    `ESCTL_TOKEN`) every route but `/health`, `/session` and the console's files (`/`,
    `/index.html`, `/favicon.ico`, `/console/...`, which hold no data) needs it, as
    `Authorization: Bearer TOKEN` or as the cookie `POST /session` sets; otherwise 401. A route asked with a method it
    does not take answers 405 with an `Allow` header; an unknown path answers 404. Bodies over
    the limit (`--max-body`, default 4 MiB) answer 413; bodies whose content type is not JSON
    (or NDJSON for `/append`) answer 415. Whatever the route: a `Host` that does not name the
    server (a DNS-rebinding page) answers 421 (code misdirected); a request from a web page of
    another origin (`Origin`, or `Sec-Fetch-Site` without an allowed `Origin`) answers 403 (code
    forbidden), the console's files and `/health` excepted; past the connection cap
    (`--max-connections`) a new connection's request answers 503 with `Retry-After`.

    This file is embedded in the server (`Sources/HTTPServer/OpenAPIDocument.swift`, written by
    `scripts/openapi-swift.sh`); a test checks that the two are equal and that the paths and
    methods here are the routes the server registers.
servers:
  - url: http://127.0.0.1:8080
security:
  - {}
  - bearer: []
  - session: []
paths:
  /health:
    get:
      operationId: health
      summary: Whether the store answers, its head position, and whether this request carries the token's rights (open without the token).
      security:
        - {}
      responses:
        "200":
          description: The store answers. `authorized` is true when the server has no token or the request carries it (the console asks for the token when it is false); `readOnly` is true when the store is served for reading only (writes answer 503).
          content:
            application/json:
              schema:
                type: object
                required: [status, head, authorized, readOnly]
                properties:
                  status: { const: ok }
                  head: { type: integer, minimum: 0 }
                  authorized: { type: boolean }
                  readOnly: { type: boolean }
        "503": { $ref: "#/components/responses/Unavailable" }
  /session:
    post:
      operationId: openSession
      summary: Opens a browser session - the HttpOnly, SameSite=Strict cookie that carries the token's rights (an EventSource cannot send headers).
      security:
        - {}
      requestBody:
        required: false
        content:
          application/json:
            schema:
              type: object
              properties:
                token: { type: string }
      responses:
        "204":
          description: The session is open (the cookie is set); a server without a token sets none.
        "401": { $ref: "#/components/responses/Unauthorized" }
        "408": { $ref: "#/components/responses/RequestTimeout" }
        "413": { $ref: "#/components/responses/PayloadTooLarge" }
        "415": { $ref: "#/components/responses/UnsupportedMediaType" }
  /streams/{stream}:
    parameters:
      - $ref: "#/components/parameters/Stream"
    post:
      operationId: appendToStream
      summary: Appends events to one stream, atomically.
      parameters:
        - name: Expected-Version
          in: header
          required: false
          description: "`any` (default), `no-stream`, `exists` or the stream's version N."
          schema: { type: string, pattern: "^(any|no-stream|exists|[0-9]+)$" }
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: array
              items: { $ref: "#/components/schemas/NewEvent" }
      responses:
        "200":
          description: The same ids with the same content were recorded before - the original positions.
          content:
            application/json:
              schema: { $ref: "#/components/schemas/AppendResult" }
        "201":
          description: Appended.
          content:
            application/json:
              schema: { $ref: "#/components/schemas/AppendResult" }
        "400": { $ref: "#/components/responses/BadRequest" }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "409": { $ref: "#/components/responses/Conflict" }
        "410": { $ref: "#/components/responses/Tombstoned" }
        "408": { $ref: "#/components/responses/RequestTimeout" }
        "413": { $ref: "#/components/responses/PayloadTooLarge" }
        "415": { $ref: "#/components/responses/UnsupportedMediaType" }
    delete:
      operationId: deleteStream
      summary: Deletes a stream's events, as `esctl streams delete` (soft, or `hard=true` to tombstone it); positions are never reused and deleted ids stay known.
      parameters:
        - name: Expected-Version
          in: header
          required: false
          description: "`any` (default), `exists` or the stream's version N."
          schema: { type: string, pattern: "^(any|no-stream|exists|[0-9]+)$" }
        - { name: hard, in: query, required: false, schema: { enum: ["true", "false"] } }
      responses:
        "200":
          description: The deletion, as `esctl streams delete --json` prints it.
          content:
            application/json:
              schema: { $ref: "#/components/schemas/StreamDeletion" }
        "400": { $ref: "#/components/responses/BadRequest" }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "404": { $ref: "#/components/responses/NotFound" }
        "409": { $ref: "#/components/responses/Conflict" }
        "410": { $ref: "#/components/responses/Tombstoned" }
    get:
      operationId: readStream
      summary: A stream's events as NDJSON, one `esctl replay --json` object a line.
      parameters:
        - { name: from, in: query, required: false, schema: { type: integer, minimum: 0 }, description: The first version to read. }
        - { name: limit, in: query, required: false, schema: { type: integer, minimum: 0 } }
        - { name: direction, in: query, required: false, schema: { enum: [forward, backward] } }
      responses:
        "200":
          description: The events.
          content:
            application/x-ndjson:
              schema: { type: string }
        "400": { $ref: "#/components/responses/BadRequest" }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "404": { $ref: "#/components/responses/NotFound" }
  /append:
    post:
      operationId: appendBatch
      summary: Appends NDJSON lines (as `esctl append --batch` takes them) atomically across streams.
      requestBody:
        required: true
        content:
          application/x-ndjson:
            schema: { type: string }
      responses:
        "200":
          description: Every event was recorded before with the same content.
          content:
            application/json:
              schema: { type: array, items: { $ref: "#/components/schemas/AppendResult" } }
        "201":
          description: Appended; one result per stream in input order.
          content:
            application/json:
              schema: { type: array, items: { $ref: "#/components/schemas/AppendResult" } }
        "400": { $ref: "#/components/responses/BadRequest" }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "409": { $ref: "#/components/responses/Conflict" }
        "410": { $ref: "#/components/responses/Tombstoned" }
        "408": { $ref: "#/components/responses/RequestTimeout" }
        "413": { $ref: "#/components/responses/PayloadTooLarge" }
        "415": { $ref: "#/components/responses/UnsupportedMediaType" }
  /streams/{stream}/info:
    parameters:
      - $ref: "#/components/parameters/Stream"
    get:
      operationId: streamInfo
      summary: A stream's version, first version kept, event count, tombstone and retention policy, as `esctl streams show --json`.
      responses:
        "200":
          description: What the store knows of the stream.
          content:
            application/json:
              schema: { $ref: "#/components/schemas/StreamInfo" }
        "400": { $ref: "#/components/responses/BadRequest" }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "404": { $ref: "#/components/responses/NotFound" }
  /streams/{stream}/retention:
    parameters:
      - $ref: "#/components/parameters/Stream"
    put:
      operationId: setRetention
      summary: Sets a stream's retention policy (`{}` clears it), as `esctl streams retention`; the next append to it, or POST /purge, removes what it no longer keeps.
      requestBody:
        required: true
        content:
          application/json:
            schema: { $ref: "#/components/schemas/RetentionPolicy" }
      responses:
        "200":
          description: The policy set.
          content:
            application/json:
              schema:
                type: object
                required: [stream, retention]
                properties:
                  stream: { type: string }
                  retention: { oneOf: [{ $ref: "#/components/schemas/RetentionPolicy" }, { type: "null" }] }
        "400": { $ref: "#/components/responses/BadRequest" }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "404": { $ref: "#/components/responses/NotFound" }
        "410": { $ref: "#/components/responses/Tombstoned" }
        "408": { $ref: "#/components/responses/RequestTimeout" }
        "413": { $ref: "#/components/responses/PayloadTooLarge" }
        "415": { $ref: "#/components/responses/UnsupportedMediaType" }
  /purge:
    post:
      operationId: purge
      summary: Applies every stream's retention policy now, as `esctl purge --json`.
      responses:
        "200":
          description: What was removed.
          content:
            application/json:
              schema:
                type: object
                required: [removed, deletions]
                properties:
                  removed: { type: integer, minimum: 0 }
                  deletions: { type: array, items: { $ref: "#/components/schemas/StreamDeletion" } }
        "401": { $ref: "#/components/responses/Unauthorized" }
  /subjects/{subject}/forget:
    post:
      operationId: forgetSubject
      summary: 'Forgets a subject (destroys the key of the data personal to it), as `esctl forget --json`; from then on every read shows that data as {"$forgotten":"SUBJECT"}. Repeating it writes nothing and answers alreadyForgotten.'
      parameters:
        - { name: subject, in: path, required: true, schema: { type: string, minLength: 1 } }
      responses:
        "200":
          description: What was done.
          content:
            application/json:
              schema:
                type: object
                required: [subject, key, requestPosition, forgottenPosition, alreadyForgotten, known]
                properties:
                  subject: { type: string }
                  key: { oneOf: [{ type: string }, { type: "null" }], description: The id of the key destroyed. }
                  requestPosition: { oneOf: [{ type: integer, minimum: 1 }, { type: "null" }] }
                  forgottenPosition: { oneOf: [{ type: integer, minimum: 1 }, { type: "null" }] }
                  alreadyForgotten: { type: boolean }
                  known: { type: boolean, description: False when no data was ever marked personal to the subject here. }
        "400": { $ref: "#/components/responses/BadRequest" }
        "401": { $ref: "#/components/responses/Unauthorized" }
  /events:
    get:
      operationId: readEvents
      summary: A page of the global log as NDJSON; a page examines at most 10,000 positions (or `limit`, when larger), holds at most 4 MiB of stored events (or one event, when larger), and says in Next-From where to go on.
      parameters:
        - { name: from, in: query, required: false, schema: { type: integer, minimum: 0 } }
        - { name: to, in: query, required: false, schema: { type: integer, minimum: 0 } }
        - { name: type, in: query, required: false, schema: { type: string } }
        - { name: category, in: query, required: false, schema: { type: string } }
        - { name: limit, in: query, required: false, schema: { type: integer, minimum: 0 } }
      responses:
        "200":
          description: The events. When the page stopped before `to` and the head (its limit reached, its 4 MiB of events held, or the positions it may examine examined), the header Next-From gives the position to ask from next; without it the range is read to its end.
          headers:
            Next-From:
              description: The position the next page starts at.
              schema: { type: string }
          content:
            application/x-ndjson:
              schema: { type: string }
        "400": { $ref: "#/components/responses/BadRequest" }
        "401": { $ref: "#/components/responses/Unauthorized" }
  /subscribe:
    get:
      operationId: subscribe
      summary: A live stream of events - Server-Sent Events with `Accept text/event-stream`, NDJSON otherwise.
      description: |
        SSE: each event as `id: POSITION` and `data: <event JSON>`; one `event: caughtUp` when
        catch-up turns live; a comment line as heartbeat every 15 s. A `Last-Event-ID` header
        resumes after that position. `limit=N` ends the stream after N events; without it the
        stream is endless. Past `--max-subscribers` open live streams, 503 with Retry-After. A
        client that takes nothing written to it for `--stall-timeout` seconds is cut (the
        connection closes); it resumes with Last-Event-ID without a gap.
      parameters:
        - { name: from, in: query, required: false, schema: { type: string, pattern: "^(start|end|[0-9]+)$" } }
        - { name: stream, in: query, required: false, schema: { type: string } }
        - { name: category, in: query, required: false, schema: { type: string } }
        - { name: type, in: query, required: false, schema: { type: string } }
        - { name: limit, in: query, required: false, schema: { type: integer, minimum: 0 } }
        - { name: Last-Event-ID, in: header, required: false, schema: { type: string, pattern: "^[0-9]+$" } }
      responses:
        "200":
          description: The stream.
          content:
            text/event-stream:
              schema: { type: string }
            application/x-ndjson:
              schema: { type: string }
        "400": { $ref: "#/components/responses/BadRequest" }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "503": { $ref: "#/components/responses/Unavailable" }
  /projections:
    get:
      operationId: listProjections
      summary: The registered projections, as `esctl projections --json` prints them, in one array.
      responses:
        "200":
          description: The projections.
          content:
            application/json:
              schema: { type: array, items: { type: object } }
        "401": { $ref: "#/components/responses/Unauthorized" }
  /projections/{name}:
    parameters:
      - $ref: "#/components/parameters/Projection"
    get:
      operationId: queryProjection
      summary: A projection's answer, the body of `esctl query NAME --json`.
      parameters:
        - { name: asOf, in: query, required: false, schema: { type: integer, minimum: 0 } }
        - { name: minPosition, in: query, required: false, schema: { type: integer, minimum: 0 } }
        - name: parameters
          in: query
          required: false
          description: The projection's own query parameters (see GET /projections).
          style: form
          explode: true
          schema:
            type: object
            additionalProperties: { type: string }
      responses:
        "200":
          description: The answer.
          content:
            application/json:
              schema: {}
        "400": { $ref: "#/components/responses/BadRequest" }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "404": { $ref: "#/components/responses/NotFound" }
        "412": { $ref: "#/components/responses/TimedOut" }
        "503": { $ref: "#/components/responses/Unavailable" }
  /projections/{name}/rebuild:
    parameters:
      - $ref: "#/components/parameters/Projection"
    post:
      operationId: rebuildProjection
      summary: Rebuilds a projection from the start of the log.
      responses:
        "200":
          description: Rebuilt.
          content:
            application/json:
              schema: { type: object }
        "202":
          description: The rebuild has started.
          content:
            application/json:
              schema: { type: object }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "404": { $ref: "#/components/responses/NotFound" }
        "409": { $ref: "#/components/responses/Conflict" }
  /stats:
    get:
      operationId: stats
      summary: The store's statistics, as `esctl stats --json` prints them.
      responses:
        "200":
          description: The statistics.
          content:
            application/json:
              schema: { type: object }
        "401": { $ref: "#/components/responses/Unauthorized" }
  /metrics:
    get:
      operationId: metrics
      summary: The server's and the library's metrics in Prometheus' text format.
      responses:
        "200":
          description: The metrics.
          content:
            text/plain:
              schema: { type: string }
        "401": { $ref: "#/components/responses/Unauthorized" }
  /openapi.yaml:
    get:
      operationId: openAPIDocument
      summary: This document.
      responses:
        "200":
          description: The OpenAPI 3.1 document of the API.
          content:
            application/yaml:
              schema: { type: string }
        "401": { $ref: "#/components/responses/Unauthorized" }
  /:
    get:
      operationId: console
      summary: The console - a web page of the log, the projections and the apps (open without the token; the page asks for it).
      security:
        - {}
      responses:
        "200":
          description: The console's page.
          content:
            text/html:
              schema: { type: string }
  /index.html:
    get:
      operationId: consoleIndex
      summary: The console's page, as at /.
      security:
        - {}
      responses:
        "200":
          description: The console's page.
          content:
            text/html:
              schema: { type: string }
  /favicon.ico:
    get:
      operationId: favicon
      summary: The console's icon (an SVG image), where browsers look for one.
      security:
        - {}
      responses:
        "200":
          description: The icon.
          content:
            image/svg+xml:
              schema: { type: string }
  /console/{file}:
    get:
      operationId: consoleFile
      summary: One of the console's files - its page, style sheet, scripts (JavaScript modules) and icon, all inside the binary.
      security:
        - {}
      parameters:
        - name: file
          in: path
          required: true
          schema: { type: string }
          examples:
            script: { value: main.js }
            styles: { value: console.css }
      responses:
        "200":
          description: The file.
          content:
            text/html:
              schema: { type: string }
            text/css:
              schema: { type: string }
            text/javascript:
              schema: { type: string }
            image/svg+xml:
              schema: { type: string }
        "404": { $ref: "#/components/responses/NotFound" }
  /chat/room:
    get:
      operationId: chatRoom
      summary: The chat app's own protocol - the room as an endless body of JSON lines ending in CRLF.
      description: |
        The whole query string is the user name (percent-decoded, `+` as space), e.g.
        `/chat/room?Ada`. First `{"activeUsers":N}`, then the room's last 3 messages, then every
        new message as it is committed. Connecting records the message `NAME connected`.
      responses:
        "200":
          description: The endless stream of lines.
          content:
            application/octet-stream:
              schema: { type: string }
        "400": { $ref: "#/components/responses/BadRequest" }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "410": { $ref: "#/components/responses/Tombstoned" }
        "503": { $ref: "#/components/responses/Unavailable" }
  /chat/say:
    post:
      operationId: chatSay
      summary: The chat app's own protocol - says a message in the server's room (`--chat-room`).
      description: |
        The date is the server's clock's, not the body's. The original server answered OK to
        everything; this one answers 400 to an empty message or a body that does not decode.
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              required: [id, message, date]
              properties:
                id: { type: string, format: uuid }
                user: { type: string }
                message: { type: string, minLength: 1 }
                date: { type: number, description: Seconds since 2001-01-01T00:00:00Z. }
      responses:
        "200":
          description: Recorded; the body is `OK`.
          content:
            text/plain:
              schema: { const: OK }
        "400": { $ref: "#/components/responses/BadRequest" }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "410": { $ref: "#/components/responses/Tombstoned" }
        "408": { $ref: "#/components/responses/RequestTimeout" }
        "413": { $ref: "#/components/responses/PayloadTooLarge" }
        "415": { $ref: "#/components/responses/UnsupportedMediaType" }
  /apps/fitness/goal:
    post:
      operationId: fitnessGoal
      summary: "Sets the goal, a positive number of steps, before starting (`esctl fitness goal`)."
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              additionalProperties: false
              required: [steps]
              properties:
                user: { type: string, minLength: 1, maxLength: 150, pattern: '^[^\u0000-\u001F\u007F-\u009F]+$', description: "The user (default \"default\")." }
                steps: { type: integer, description: "The goal in steps." }
      responses:
        "200": { $ref: "#/components/responses/NothingRecorded" }
        "201": { $ref: "#/components/responses/Recorded" }
        "400": { $ref: "#/components/responses/BadRequest" }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "410": { $ref: "#/components/responses/Tombstoned" }
        "409": { $ref: "#/components/responses/Conflict" }
        "408": { $ref: "#/components/responses/RequestTimeout" }
        "413": { $ref: "#/components/responses/PayloadTooLarge" }
        "415": { $ref: "#/components/responses/UnsupportedMediaType" }
        "422": { $ref: "#/components/responses/Refused" }
  /apps/fitness/start:
    post:
      operationId: fitnessStart
      summary: "Starts (or resumes) the workout; it needs a goal (`esctl fitness start`)."
      requestBody:
        required: false
        content:
          application/json:
            schema:
              type: object
              additionalProperties: false
              properties:
                user: { type: string, minLength: 1, maxLength: 150, pattern: '^[^\u0000-\u001F\u007F-\u009F]+$', description: "The user (default \"default\")." }
      responses:
        "200": { $ref: "#/components/responses/NothingRecorded" }
        "201": { $ref: "#/components/responses/Recorded" }
        "400": { $ref: "#/components/responses/BadRequest" }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "410": { $ref: "#/components/responses/Tombstoned" }
        "409": { $ref: "#/components/responses/Conflict" }
        "408": { $ref: "#/components/responses/RequestTimeout" }
        "413": { $ref: "#/components/responses/PayloadTooLarge" }
        "415": { $ref: "#/components/responses/UnsupportedMediaType" }
        "422": { $ref: "#/components/responses/Refused" }
  /apps/fitness/pause:
    post:
      operationId: fitnessPause
      summary: "Pauses the workout (`esctl fitness pause`)."
      requestBody:
        required: false
        content:
          application/json:
            schema:
              type: object
              additionalProperties: false
              properties:
                user: { type: string, minLength: 1, maxLength: 150, pattern: '^[^\u0000-\u001F\u007F-\u009F]+$', description: "The user (default \"default\")." }
      responses:
        "200": { $ref: "#/components/responses/NothingRecorded" }
        "201": { $ref: "#/components/responses/Recorded" }
        "400": { $ref: "#/components/responses/BadRequest" }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "410": { $ref: "#/components/responses/Tombstoned" }
        "409": { $ref: "#/components/responses/Conflict" }
        "408": { $ref: "#/components/responses/RequestTimeout" }
        "413": { $ref: "#/components/responses/PayloadTooLarge" }
        "415": { $ref: "#/components/responses/UnsupportedMediaType" }
        "422": { $ref: "#/components/responses/Refused" }
  /apps/fitness/restart:
    post:
      operationId: fitnessRestart
      summary: "Starts over - clears the goal, steps, distances and the alerts sent (`esctl fitness restart`)."
      requestBody:
        required: false
        content:
          application/json:
            schema:
              type: object
              additionalProperties: false
              properties:
                user: { type: string, minLength: 1, maxLength: 150, pattern: '^[^\u0000-\u001F\u007F-\u009F]+$', description: "The user (default \"default\")." }
      responses:
        "200": { $ref: "#/components/responses/NothingRecorded" }
        "201": { $ref: "#/components/responses/Recorded" }
        "400": { $ref: "#/components/responses/BadRequest" }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "410": { $ref: "#/components/responses/Tombstoned" }
        "409": { $ref: "#/components/responses/Conflict" }
        "408": { $ref: "#/components/responses/RequestTimeout" }
        "413": { $ref: "#/components/responses/PayloadTooLarge" }
        "415": { $ref: "#/components/responses/UnsupportedMediaType" }
        "422": { $ref: "#/components/responses/Refused" }
  /apps/fitness/walk:
    post:
      operationId: fitnessWalk
      summary: "Records pedometer data - steps and meters walked since the last report (`esctl fitness walk`)."
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              additionalProperties: false
              required: [steps]
              properties:
                user: { type: string, minLength: 1, maxLength: 150, pattern: '^[^\u0000-\u001F\u007F-\u009F]+$', description: "The user (default \"default\")." }
                steps: { type: integer, description: "Steps walked." }
                distance: { type: number, description: "Meters walked (default 0)." }
      responses:
        "200": { $ref: "#/components/responses/NothingRecorded" }
        "201": { $ref: "#/components/responses/Recorded" }
        "400": { $ref: "#/components/responses/BadRequest" }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "410": { $ref: "#/components/responses/Tombstoned" }
        "409": { $ref: "#/components/responses/Conflict" }
        "408": { $ref: "#/components/responses/RequestTimeout" }
        "413": { $ref: "#/components/responses/PayloadTooLarge" }
        "415": { $ref: "#/components/responses/UnsupportedMediaType" }
        "422": { $ref: "#/components/responses/Refused" }
  /apps/fitness/nessie:
    post:
      operationId: fitnessNessie
      summary: "Moves Nessie - her distance in meters is now this (`esctl fitness nessie`)."
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              additionalProperties: false
              required: [meters]
              properties:
                user: { type: string, minLength: 1, maxLength: 150, pattern: '^[^\u0000-\u001F\u007F-\u009F]+$', description: "The user (default \"default\")." }
                meters: { type: number, description: "Nessie's distance in meters." }
      responses:
        "200": { $ref: "#/components/responses/NothingRecorded" }
        "201": { $ref: "#/components/responses/Recorded" }
        "400": { $ref: "#/components/responses/BadRequest" }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "410": { $ref: "#/components/responses/Tombstoned" }
        "409": { $ref: "#/components/responses/Conflict" }
        "408": { $ref: "#/components/responses/RequestTimeout" }
        "413": { $ref: "#/components/responses/PayloadTooLarge" }
        "415": { $ref: "#/components/responses/UnsupportedMediaType" }
        "422": { $ref: "#/components/responses/Refused" }
  /apps/alerts/post:
    post:
      operationId: alertsPost
      summary: "Posts a free-text alert (`esctl alerts post`); a text already queued records nothing (200, `[]`)."
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              additionalProperties: false
              required: [text]
              properties:
                user: { type: string, minLength: 1, maxLength: 150, pattern: '^[^\u0000-\u001F\u007F-\u009F]+$', description: "The user (default \"default\")." }
                text: { type: string, maxLength: 4000, pattern: '\S', description: "The alert's text." }
                severity: { enum: [good, bad], description: "good or bad (default good)." }
      responses:
        "200": { $ref: "#/components/responses/NothingRecorded" }
        "201": { $ref: "#/components/responses/Recorded" }
        "400": { $ref: "#/components/responses/BadRequest" }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "410": { $ref: "#/components/responses/Tombstoned" }
        "409": { $ref: "#/components/responses/Conflict" }
        "408": { $ref: "#/components/responses/RequestTimeout" }
        "413": { $ref: "#/components/responses/PayloadTooLarge" }
        "415": { $ref: "#/components/responses/UnsupportedMediaType" }
        "422": { $ref: "#/components/responses/Refused" }
  /apps/alerts/clear:
    post:
      operationId: alertsClear
      summary: "Clears one alert by name (e.g. milestone25Percent) or text, or all with `\"all\": true` (`esctl alerts clear`)."
      requestBody:
        required: false
        content:
          application/json:
            schema:
              type: object
              additionalProperties: false
              properties:
                user: { type: string, minLength: 1, maxLength: 150, pattern: '^[^\u0000-\u001F\u007F-\u009F]+$', description: "The user (default \"default\")." }
                alert: { type: string, description: "The alert's name or text; give it or `all`, not both." }
                all: { type: boolean, description: "Clear every alert." }
      responses:
        "200": { $ref: "#/components/responses/NothingRecorded" }
        "201": { $ref: "#/components/responses/Recorded" }
        "400": { $ref: "#/components/responses/BadRequest" }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "410": { $ref: "#/components/responses/Tombstoned" }
        "404": { $ref: "#/components/responses/NotFound" }
        "409": { $ref: "#/components/responses/Conflict" }
        "408": { $ref: "#/components/responses/RequestTimeout" }
        "413": { $ref: "#/components/responses/PayloadTooLarge" }
        "415": { $ref: "#/components/responses/UnsupportedMediaType" }
        "422": { $ref: "#/components/responses/Refused" }
  /apps/chat/say:
    post:
      operationId: chatAppSay
      summary: "Says something (`esctl chat say`)."
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              additionalProperties: false
              required: [user, text]
              properties:
                user: { type: string, minLength: 1, maxLength: 150, pattern: '^[^\u0000-\u001F\u007F-\u009F]+$', description: "Who speaks." }
                room: { type: string, minLength: 1, maxLength: 150, pattern: '^[^\u0000-\u001F\u007F-\u009F]+$', description: "The chat room (default \"default\")." }
                text: { type: string, maxLength: 4000, pattern: '\S', description: "The text." }
      responses:
        "200": { $ref: "#/components/responses/NothingRecorded" }
        "201": { $ref: "#/components/responses/Recorded" }
        "400": { $ref: "#/components/responses/BadRequest" }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "410": { $ref: "#/components/responses/Tombstoned" }
        "409": { $ref: "#/components/responses/Conflict" }
        "408": { $ref: "#/components/responses/RequestTimeout" }
        "413": { $ref: "#/components/responses/PayloadTooLarge" }
        "415": { $ref: "#/components/responses/UnsupportedMediaType" }
        "422": { $ref: "#/components/responses/Refused" }
  /apps/chat/location:
    post:
      operationId: chatAppLocation
      summary: "Shares a location - says \"📍 ADDRESS\" (`esctl chat location`)."
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              additionalProperties: false
              required: [user, address]
              properties:
                user: { type: string, minLength: 1, maxLength: 150, pattern: '^[^\u0000-\u001F\u007F-\u009F]+$', description: "Who speaks." }
                room: { type: string, minLength: 1, maxLength: 150, pattern: '^[^\u0000-\u001F\u007F-\u009F]+$', description: "The chat room (default \"default\")." }
                address: { type: string, maxLength: 4000, pattern: '\S', description: "The address." }
      responses:
        "200": { $ref: "#/components/responses/NothingRecorded" }
        "201": { $ref: "#/components/responses/Recorded" }
        "400": { $ref: "#/components/responses/BadRequest" }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "410": { $ref: "#/components/responses/Tombstoned" }
        "409": { $ref: "#/components/responses/Conflict" }
        "408": { $ref: "#/components/responses/RequestTimeout" }
        "413": { $ref: "#/components/responses/PayloadTooLarge" }
        "415": { $ref: "#/components/responses/UnsupportedMediaType" }
        "422": { $ref: "#/components/responses/Refused" }
  /apps/chat/connect:
    post:
      operationId: chatAppConnect
      summary: "Says that the user connected (`esctl chat connect`)."
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              additionalProperties: false
              required: [user]
              properties:
                user: { type: string, minLength: 1, maxLength: 150, pattern: '^[^\u0000-\u001F\u007F-\u009F]+$', description: "Who speaks." }
                room: { type: string, minLength: 1, maxLength: 150, pattern: '^[^\u0000-\u001F\u007F-\u009F]+$', description: "The chat room (default \"default\")." }
      responses:
        "200": { $ref: "#/components/responses/NothingRecorded" }
        "201": { $ref: "#/components/responses/Recorded" }
        "400": { $ref: "#/components/responses/BadRequest" }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "410": { $ref: "#/components/responses/Tombstoned" }
        "409": { $ref: "#/components/responses/Conflict" }
        "408": { $ref: "#/components/responses/RequestTimeout" }
        "413": { $ref: "#/components/responses/PayloadTooLarge" }
        "415": { $ref: "#/components/responses/UnsupportedMediaType" }
        "422": { $ref: "#/components/responses/Refused" }
  /apps/chat/away:
    post:
      operationId: chatAppAway
      summary: "Says that the user went away (`esctl chat away`)."
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              additionalProperties: false
              required: [user]
              properties:
                user: { type: string, minLength: 1, maxLength: 150, pattern: '^[^\u0000-\u001F\u007F-\u009F]+$', description: "Who speaks." }
                room: { type: string, minLength: 1, maxLength: 150, pattern: '^[^\u0000-\u001F\u007F-\u009F]+$', description: "The chat room (default \"default\")." }
      responses:
        "200": { $ref: "#/components/responses/NothingRecorded" }
        "201": { $ref: "#/components/responses/Recorded" }
        "400": { $ref: "#/components/responses/BadRequest" }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "410": { $ref: "#/components/responses/Tombstoned" }
        "409": { $ref: "#/components/responses/Conflict" }
        "408": { $ref: "#/components/responses/RequestTimeout" }
        "413": { $ref: "#/components/responses/PayloadTooLarge" }
        "415": { $ref: "#/components/responses/UnsupportedMediaType" }
        "422": { $ref: "#/components/responses/Refused" }
  /apps/chat/back:
    post:
      operationId: chatAppBack
      summary: "Says that the user came back (`esctl chat back`)."
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              additionalProperties: false
              required: [user]
              properties:
                user: { type: string, minLength: 1, maxLength: 150, pattern: '^[^\u0000-\u001F\u007F-\u009F]+$', description: "Who speaks." }
                room: { type: string, minLength: 1, maxLength: 150, pattern: '^[^\u0000-\u001F\u007F-\u009F]+$', description: "The chat room (default \"default\")." }
      responses:
        "200": { $ref: "#/components/responses/NothingRecorded" }
        "201": { $ref: "#/components/responses/Recorded" }
        "400": { $ref: "#/components/responses/BadRequest" }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "410": { $ref: "#/components/responses/Tombstoned" }
        "409": { $ref: "#/components/responses/Conflict" }
        "408": { $ref: "#/components/responses/RequestTimeout" }
        "413": { $ref: "#/components/responses/PayloadTooLarge" }
        "415": { $ref: "#/components/responses/UnsupportedMediaType" }
        "422": { $ref: "#/components/responses/Refused" }
  /apps/chat/countdown:
    post:
      operationId: chatAppCountdown
      summary: "Counts down to a text - \"3...\", \"2...\", \"1...\", then \"🎉 TEXT\", `interval` seconds apart on the server's clock; answers when all four are recorded (`esctl chat countdown`)."
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              additionalProperties: false
              required: [user, text]
              properties:
                user: { type: string, minLength: 1, maxLength: 150, pattern: '^[^\u0000-\u001F\u007F-\u009F]+$', description: "Who speaks." }
                room: { type: string, minLength: 1, maxLength: 150, pattern: '^[^\u0000-\u001F\u007F-\u009F]+$', description: "The chat room (default \"default\")." }
                text: { type: string, maxLength: 4000, pattern: '\S', description: "The text to count down to." }
                interval: { type: number, minimum: 0, maximum: 10, description: "Seconds between messages (default 1; esctl allows up to 3600)." }
      responses:
        "200": { $ref: "#/components/responses/NothingRecorded" }
        "201": { $ref: "#/components/responses/Recorded" }
        "400": { $ref: "#/components/responses/BadRequest" }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "410": { $ref: "#/components/responses/Tombstoned" }
        "409": { $ref: "#/components/responses/Conflict" }
        "408": { $ref: "#/components/responses/RequestTimeout" }
        "413": { $ref: "#/components/responses/PayloadTooLarge" }
        "415": { $ref: "#/components/responses/UnsupportedMediaType" }
        "422": { $ref: "#/components/responses/Refused" }
  /apps/camp/add-camper:
    post:
      operationId: campAddCamper
      summary: "Adds a camper (`esctl camp add-camper`); the camper's id is in the event's data."
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              additionalProperties: false
              required: [name, phone]
              properties:
                campground: { type: string, minLength: 1, maxLength: 150, pattern: '^[^\u0000-\u001F\u007F-\u009F]+$', description: "The campground (default \"default\")." }
                name: { type: string, maxLength: 200, pattern: '\S', description: "The camper's full name." }
                phone: { type: string, maxLength: 200, pattern: '\S', description: "The camper's phone number." }
      responses:
        "200": { $ref: "#/components/responses/NothingRecorded" }
        "201": { $ref: "#/components/responses/Recorded" }
        "400": { $ref: "#/components/responses/BadRequest" }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "410": { $ref: "#/components/responses/Tombstoned" }
        "409": { $ref: "#/components/responses/Conflict" }
        "408": { $ref: "#/components/responses/RequestTimeout" }
        "413": { $ref: "#/components/responses/PayloadTooLarge" }
        "415": { $ref: "#/components/responses/UnsupportedMediaType" }
        "422": { $ref: "#/components/responses/Refused" }
  /apps/camp/add-site:
    post:
      operationId: campAddSite
      summary: "Adds a site, a number that may exist once (`esctl camp add-site`)."
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              additionalProperties: false
              required: [number]
              properties:
                campground: { type: string, minLength: 1, maxLength: 150, pattern: '^[^\u0000-\u001F\u007F-\u009F]+$', description: "The campground (default \"default\")." }
                number: { type: integer, description: "The site's number." }
                electricity: { type: boolean, description: "The site has electricity (default false)." }
                water: { type: boolean, description: "The site has water (default false)." }
      responses:
        "200": { $ref: "#/components/responses/NothingRecorded" }
        "201": { $ref: "#/components/responses/Recorded" }
        "400": { $ref: "#/components/responses/BadRequest" }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "410": { $ref: "#/components/responses/Tombstoned" }
        "409": { $ref: "#/components/responses/Conflict" }
        "408": { $ref: "#/components/responses/RequestTimeout" }
        "413": { $ref: "#/components/responses/PayloadTooLarge" }
        "415": { $ref: "#/components/responses/UnsupportedMediaType" }
        "422": { $ref: "#/components/responses/Refused" }
  /apps/camp/delete-site:
    post:
      operationId: campDeleteSite
      summary: "Deletes a site without active reservations (`esctl camp delete-site`)."
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              additionalProperties: false
              required: [number]
              properties:
                campground: { type: string, minLength: 1, maxLength: 150, pattern: '^[^\u0000-\u001F\u007F-\u009F]+$', description: "The campground (default \"default\")." }
                number: { type: integer, description: "The site's number." }
      responses:
        "200": { $ref: "#/components/responses/NothingRecorded" }
        "201": { $ref: "#/components/responses/Recorded" }
        "400": { $ref: "#/components/responses/BadRequest" }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "410": { $ref: "#/components/responses/Tombstoned" }
        "404": { $ref: "#/components/responses/NotFound" }
        "409": { $ref: "#/components/responses/Conflict" }
        "408": { $ref: "#/components/responses/RequestTimeout" }
        "413": { $ref: "#/components/responses/PayloadTooLarge" }
        "415": { $ref: "#/components/responses/UnsupportedMediaType" }
        "422": { $ref: "#/components/responses/Refused" }
  /apps/camp/reserve:
    post:
      operationId: campReserve
      summary: "Reserves a site for a camper from a date for some nights (`esctl camp reserve`). A reservation of 0 nights or fewer, or overlapping a reserved stay of the same site, is recorded with status Invalid and answers 422 with the recorded events."
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              additionalProperties: false
              required: [site, camper, date, nights]
              properties:
                campground: { type: string, minLength: 1, maxLength: 150, pattern: '^[^\u0000-\u001F\u007F-\u009F]+$', description: "The campground (default \"default\")." }
                site: { type: integer, description: "The site's number." }
                camper: { type: string, description: "The camper's id." }
                date: { type: string, description: "The first night, as YYYY-MM-DD." }
                nights: { type: integer, description: "The number of nights." }
      responses:
        "200": { $ref: "#/components/responses/NothingRecorded" }
        "201": { $ref: "#/components/responses/Recorded" }
        "400": { $ref: "#/components/responses/BadRequest" }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "410": { $ref: "#/components/responses/Tombstoned" }
        "404": { $ref: "#/components/responses/NotFound" }
        "409": { $ref: "#/components/responses/Conflict" }
        "408": { $ref: "#/components/responses/RequestTimeout" }
        "413": { $ref: "#/components/responses/PayloadTooLarge" }
        "415": { $ref: "#/components/responses/UnsupportedMediaType" }
        "422": { $ref: "#/components/responses/RecordedInvalid" }
  /apps/camp/cancel:
    post:
      operationId: campCancel
      summary: "Cancels a reserved stay (`esctl camp cancel`)."
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              additionalProperties: false
              required: [reservation]
              properties:
                campground: { type: string, minLength: 1, maxLength: 150, pattern: '^[^\u0000-\u001F\u007F-\u009F]+$', description: "The campground (default \"default\")." }
                reservation: { type: string, description: "The reservation's id." }
      responses:
        "200": { $ref: "#/components/responses/NothingRecorded" }
        "201": { $ref: "#/components/responses/Recorded" }
        "400": { $ref: "#/components/responses/BadRequest" }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "410": { $ref: "#/components/responses/Tombstoned" }
        "404": { $ref: "#/components/responses/NotFound" }
        "409": { $ref: "#/components/responses/Conflict" }
        "408": { $ref: "#/components/responses/RequestTimeout" }
        "413": { $ref: "#/components/responses/PayloadTooLarge" }
        "415": { $ref: "#/components/responses/UnsupportedMediaType" }
        "422": { $ref: "#/components/responses/Refused" }
  /apps/color/press:
    post:
      operationId: colorPress
      summary: "Presses a key of the calculator - 0-9, A-F (either case), backspace or clear (`esctl color press`); answers the display after it."
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              additionalProperties: false
              required: [key]
              properties:
                calculator: { type: string, minLength: 1, maxLength: 150, pattern: '^[^\u0000-\u001F\u007F-\u009F]+$', description: "The calculator (default \"default\")." }
                key: { type: string, description: "The key." }
      responses:
        "201":
          description: Recorded; the display after it.
          content:
            application/json:
              schema: { $ref: "#/components/schemas/ColorDisplay" }
        "400": { $ref: "#/components/responses/BadRequest" }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "410": { $ref: "#/components/responses/Tombstoned" }
        "409": { $ref: "#/components/responses/Conflict" }
        "408": { $ref: "#/components/responses/RequestTimeout" }
        "413": { $ref: "#/components/responses/PayloadTooLarge" }
        "415": { $ref: "#/components/responses/UnsupportedMediaType" }
        "422": { $ref: "#/components/responses/Refused" }
  /apps/color/set:
    post:
      operationId: colorSet
      summary: "Sets the calculator's display - up to 8 hex digits, with or without '#' (`esctl color set`); answers the display after it."
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              additionalProperties: false
              required: [hex]
              properties:
                calculator: { type: string, minLength: 1, maxLength: 150, pattern: '^[^\u0000-\u001F\u007F-\u009F]+$', description: "The calculator (default \"default\")." }
                hex: { type: string, description: "The hex text." }
      responses:
        "201":
          description: Recorded; the display after it.
          content:
            application/json:
              schema: { $ref: "#/components/schemas/ColorDisplay" }
        "400": { $ref: "#/components/responses/BadRequest" }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "410": { $ref: "#/components/responses/Tombstoned" }
        "409": { $ref: "#/components/responses/Conflict" }
        "408": { $ref: "#/components/responses/RequestTimeout" }
        "413": { $ref: "#/components/responses/PayloadTooLarge" }
        "415": { $ref: "#/components/responses/UnsupportedMediaType" }
        "422": { $ref: "#/components/responses/Refused" }
components:
  securitySchemes:
    bearer:
      type: http
      scheme: bearer
      description: The server's token (`--token` or `ESCTL_TOKEN`).
    session:
      type: apiKey
      in: cookie
      name: esctl_session
      description: The cookie `POST /session` sets.
  parameters:
    Stream:
      name: stream
      in: path
      required: true
      schema: { type: string, minLength: 1 }
    Projection:
      name: name
      in: path
      required: true
      schema: { type: string, minLength: 1 }
  schemas:
    Error:
      type: object
      required: [error, code]
      properties:
        error: { type: string, description: One sentence - what was wrong and what to do. }
        code: { type: string, description: "A stable code: badRequest, notFound, versionConflict, goalNotSet, ..." }
        field: { type: string, description: "For a command's input that is refused (400 badRequest): the field at fault, when one is." }
    Event:
      type: object
      description: An event as `esctl replay --json` prints it.
      required: [position, stream, version, id, type, data, metadata, recordedAt]
      properties:
        position: { type: integer, minimum: 0 }
        stream: { type: string }
        version: { type: integer, minimum: 0 }
        id: { type: string }
        type: { type: string }
        data: { description: "The data as JSON, or base64 text with dataEncoding: base64." }
        metadata: { description: "The metadata as JSON (null when empty), or base64 text with metadataEncoding: base64." }
        recordedAt: { type: string, description: ISO 8601, UTC, microseconds. }
        schemaVersion: { type: integer, minimum: 2, maximum: 65535, description: "The version of the type's schema the data was written in; absent when 1." }
        personal: { type: array, items: { $ref: "#/components/schemas/PersonalPart" }, description: "What of the data is personal to whom; absent when nothing is." }
        tags: { type: array, items: { type: string }, description: "The event's tags, in the order given; absent when none." }
        dataEncoding: { const: base64 }
        metadataEncoding: { const: base64 }
    Events:
      type: array
      items: { $ref: "#/components/schemas/Event" }
    NewEvent:
      type: object
      required: [type, data]
      properties:
        type: { type: string, minLength: 1 }
        data: {}
        id: { type: string, format: uuid }
        metadata: {}
        schemaVersion: { type: integer, minimum: 1, maximum: 65535, description: "The version of the type's schema the data is written in (default 1)." }
        personal: { type: array, items: { $ref: "#/components/schemas/PersonalPart" }, description: "Data to store encrypted under each subject's key." }
        tags: { type: array, items: { type: string, minLength: 1 }, maxItems: 32, uniqueItems: true, description: "Tags to find the event by (at most 32, each at most 200 bytes of UTF-8 without control characters)." }
    PersonalPart:
      type: object
      description: 'Data personal to a subject: named top-level fields of the JSON object data, or (fields null) the whole payload. On a read event, forgotten is true once the subject was forgotten and the data holds {"$forgotten":"SUBJECT"} there.'
      required: [subject, fields]
      properties:
        subject: { type: string, minLength: 1 }
        fields: { oneOf: [{ type: array, items: { type: string, minLength: 1 }, minItems: 1 }, { type: "null" }] }
        forgotten: { type: boolean }
    AppendResult:
      type: object
      required: [stream, version, positions, alreadyRecorded]
      properties:
        stream: { type: string }
        version: { type: integer, minimum: 0 }
        positions: { type: array, items: { type: integer, minimum: 0 } }
        alreadyRecorded: { type: boolean }
        deleted: { type: boolean, description: "true when an id given again belongs to an event deleted since (nothing written)" }
    StreamDeletion:
      type: object
      required: [stream, fromVersion, toVersion, count, hard, reason, types, position]
      properties:
        stream: { type: string }
        fromVersion: { type: integer, minimum: 0 }
        toVersion: { type: integer, minimum: 0 }
        count: { type: integer, minimum: 0 }
        hard: { type: boolean }
        reason: { enum: [delete, retention] }
        types: { type: array, items: { type: string } }
        position: { type: integer, minimum: 1, description: The position of the `$StreamDeleted` event that records it. }
    StreamInfo:
      type: object
      required: [stream, version, firstVersion, eventCount, tombstoned, retention]
      properties:
        stream: { type: string }
        version: { type: integer, minimum: 0 }
        firstVersion: { type: integer, minimum: 1 }
        eventCount: { type: integer, minimum: 0 }
        tombstoned: { type: boolean }
        retention: { oneOf: [{ $ref: "#/components/schemas/RetentionPolicy" }, { type: "null" }] }
    RetentionPolicy:
      type: object
      additionalProperties: false
      properties:
        maxCount: { type: integer, minimum: 1, maximum: 9223372036854775807 }
        maxAgeSeconds: { type: integer, minimum: 1, maximum: 3153600000000 }
        truncateBefore: { type: integer, minimum: 1, maximum: 9223372036854775807 }
    ColorDisplay:
      type: object
      description: The calculator's display, as `esctl color --json` and `esctl query color --json` print it.
      required: [calculator, hexText, rgboText, name, color, derived]
      properties:
        calculator: { type: string }
        hexText: { type: string, pattern: "^#[0-9A-F]{0,8}$" }
        rgboText: { type: string }
        name: { type: string }
        color:
          type: object
          required: [red, green, blue, opacity]
          properties:
            red: { type: integer, minimum: 0, maximum: 255 }
            green: { type: integer, minimum: 0, maximum: 255 }
            blue: { type: integer, minimum: 0, maximum: 255 }
            opacity: { type: integer, minimum: 0, maximum: 255 }
        derived: { type: boolean }
    RecordedInvalid:
      description: A reservation recorded with status Invalid - the error, the original app's error domain and code, and the events recorded.
      allOf:
        - $ref: "#/components/schemas/Error"
        - type: object
          required: [recorded]
          properties:
            code: { const: recordedInvalid }
            domain: { type: string, description: "CampingManager" }
            domainCode: { type: integer, description: "5: invalid number of days; 6: site already reserved." }
            recorded: { $ref: "#/components/schemas/Events" }
  responses:
    Recorded:
      description: The events recorded, as a JSON array of `esctl replay --json` objects.
      content:
        application/json:
          schema: { $ref: "#/components/schemas/Events" }
    NothingRecorded:
      description: The command needed nothing recorded (an alert already queued, an empty queue cleared) - an empty array.
      content:
        application/json:
          schema: { $ref: "#/components/schemas/Events" }
    BadRequest:
      description: The request is malformed, names an unknown field or breaks an input rule (code badRequest, invalidInput, ...).
      content:
        application/json:
          schema: { $ref: "#/components/schemas/Error" }
    Unauthorized:
      description: The server has a token and the request did not carry it. After 10 wrong tokens presented from one address within a minute (a missing token is not counted), that address gets 429 (code tooManyRequests, Retry-After 60) instead, without any check, until the minute ends.
      content:
        application/json:
          schema: { $ref: "#/components/schemas/Error" }
    NotFound:
      description: Something named does not exist.
      content:
        application/json:
          schema: { $ref: "#/components/schemas/Error" }
    Conflict:
      description: A version conflict (with stream, expected, actual and a Current-Version header), or other writers kept changing the streams.
      content:
        application/json:
          schema: { $ref: "#/components/schemas/Error" }
    Tombstoned:
      description: The stream was deleted for good (a hard delete) and takes no more events (code streamTombstoned).
      content:
        application/json:
          schema: { $ref: "#/components/schemas/Error" }
    RequestTimeout:
      description: The body did not arrive in time (--body-timeout from the head, --idle-timeout between its parts); nothing was done, and the connection is closed.
      content:
        application/json:
          schema: { $ref: "#/components/schemas/Error" }
    PayloadTooLarge:
      description: The body is over the server's limit (--max-body).
      content:
        application/json:
          schema: { $ref: "#/components/schemas/Error" }
    UnsupportedMediaType:
      description: The body's content type is not JSON (application/json) or NDJSON (application/x-ndjson).
      content:
        application/json:
          schema: { $ref: "#/components/schemas/Error" }
    Refused:
      description: A domain rule refused the command (goalNotSet, invalidState, duplicate); nothing was recorded.
      content:
        application/json:
          schema: { $ref: "#/components/schemas/Error" }
    RecordedInvalid:
      description: A domain rule refused the command (nothing recorded), or the reservation was recorded as Invalid (code recordedInvalid, with the recorded events).
      content:
        application/json:
          schema:
            oneOf:
              - $ref: "#/components/schemas/RecordedInvalid"
              - allOf:
                  - $ref: "#/components/schemas/Error"
                  - not: { required: [recorded] }
    Unavailable:
      description: The store is closed or unavailable (its data file deleted or replaced while served; served read-only, for a write), a projection served read-only is behind the log (`notCaughtUp`), a cap on what clients hold at once is reached (live streams, waits), or the server is stopping (any route); Retry-After says when to try again for the caps and the stop.
      content:
        application/json:
          schema: { $ref: "#/components/schemas/Error" }
    TimedOut:
      description: A wait (minPosition) ran out of time.
      content:
        application/json:
          schema: { $ref: "#/components/schemas/Error" }

"""##
}
