import Apps
import Commands
import EventStore
import Foundation
import Projections
import Testing
import TestSupport

/// The apps' lists, paged while appends run: every item once, in order.
@Suite("The apps' paged queries")
struct PagedQueryTests {
    @Test("a room's messages paged from the newest back, while messages keep coming: each once, in order")
    func messagesWhileAppending() async throws {
        let f = try DomainFixture()
        for n in 1...40 { _ = try await f.backend.chat(.say("m\(n)"), user: "ann", room: "r") }
        let runner = try await f.runner()
        let first = try await runner.query("messages", parameters: ["room": "r", "limit": "6"])
        var texts = first["messages"]?.arrayValue?.compactMap { $0["text"]?.stringValue } ?? []
        #expect(texts == (35...40).map { "m\($0)" })
        var cursor = first["next"]?.intValue
        var more = 41
        while let before = cursor {
            // Newer messages arrive between pages; the pages going back do not see them.
            _ = try await f.backend.chat(.say("m\(more)"), user: "bob", room: "r")
            more += 1
            let page = try await runner.query("messages", parameters: ["room": "r", "limit": "6", "before": String(before)])
            texts = (page["messages"]?.arrayValue?.compactMap { $0["text"]?.stringValue } ?? []) + texts
            cursor = page["next"]?.intValue
        }
        #expect(texts == (1...40).map { "m\($0)" })
        // And forwards from the newest seen, the new ones, once each.
        let m40 = try f.store.read(limit: .max).last { String(decoding: $0.data, as: UTF8.self).contains(#""text":"m40""#) }
        var after: Int64? = try #require(m40).position == 0 ? nil : Int64(try #require(m40).position)
        var newer: [String] = []
        while let cursor = after {
            let page = try await runner.query("messages", parameters: ["room": "r", "limit": "4", "after": String(cursor)])
            newer += page["messages"]?.arrayValue?.compactMap { $0["text"]?.stringValue } ?? []
            after = page["next"]?.intValue
        }
        #expect(newer == (41..<more).map { "m\($0)" })
    }

    @Test("campers and reservations page in the order given (C2 before C10), each once, also filtered")
    func campgroundLists() async throws {
        let f = try DomainFixture()
        for n in 1...12 { _ = try await f.backend.campground(.addCamper(fullName: "P\(n)", phoneNumber: "555")) }
        _ = try await f.backend.campground(.addSite(number: 1, electricity: true, water: true))
        _ = try await f.backend.campground(.addSite(number: 2, electricity: true, water: true))
        let july = try #require(CivilDate("2026-07-01"))
        for n in 1...12 {
            _ = try await f.backend.campground(.reserve(site: n % 2 + 1, camperId: "C\(n)", date: july.adding(days: 10 * n), nights: 2))
        }
        let runner = try await f.runner()
        func pages(_ name: String, _ extra: [String: String], limit: Int) async throws -> [String] {
            var ids: [String] = []
            var cursor: String?
            repeat {
                var parameters = extra.merging(["limit": String(limit)]) { $1 }
                if let cursor { parameters["after"] = cursor }
                let page = try await runner.query(name, parameters: QueryParameters(parameters))
                ids += page["items"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? []
                cursor = page["next"]?.stringValue
            } while cursor != nil
            return ids
        }
        #expect(try await pages("campers", [:], limit: 5) == (1...12).map { "C\($0)" })
        #expect(try await runner.query("campers").arrayValue?.compactMap { $0["id"]?.stringValue } == (1...12).map { "C\($0)" })
        #expect(try await pages("reservations", [:], limit: 4) == (1...12).map { "R\($0)" })
        #expect(try await pages("reservations", ["site": "1"], limit: 4) == (1...12).filter { $0 % 2 == 0 }.map { "R\($0)" })
        #expect(try await runner.query("reservations").arrayValue?.count == 12)
    }
}
