import JSON
import XCTest

@testable import JSONRPC

final class MessageTests: XCTestCase {
    private func classify(_ text: String) throws -> IncomingMessage {
        IncomingMessage(try JSON.parse(text))
    }

    func testRequestNotificationAndNullID() throws {
        XCTAssertEqual(
            try classify(#"{"jsonrpc":"2.0","method":"a","params":[1],"id":1}"#), .request(method: "a", params: [1], id: RequestID(1)))
        XCTAssertEqual(try classify(#"{"jsonrpc":"2.0","method":"a"}"#), .request(method: "a", params: nil, id: nil))
        XCTAssertEqual(
            try classify(#"{"jsonrpc":"2.0","method":"a","params":null,"id":null}"#),
            .request(method: "a", params: nil, id: RequestID(json: .null)))
    }

    func testLargeIDsStayExact() throws {
        XCTAssertEqual(
            try classify(#"{"jsonrpc":"2.0","method":"a","id":9007199254740993}"#),
            .request(method: "a", params: nil, id: RequestID(9_007_199_254_740_993)))
        let big = try classify(#"{"jsonrpc":"2.0","method":"a","id":18446744073709551617}"#)
        XCTAssertEqual(big, .request(method: "a", params: nil, id: RequestID(json: .bigInteger("18446744073709551617"))))
        let bytes = OutgoingMessage.response(id: RequestID(json: .bigInteger("18446744073709551617")), result: true)
        XCTAssertEqual(String(decoding: bytes, as: UTF8.self), #"{"jsonrpc":"2.0","id":18446744073709551617,"result":true}"#)
    }

    func testInvalidRequests() throws {
        guard case .invalid(nil, let error) = try classify(#"{"jsonrpc":"2.0","method":1,"params":"bar"}"#) else { return XCTFail() }
        XCTAssertEqual(error.code, .invalidRequest)
        guard case .invalid(let id, _) = try classify(#"{"jsonrpc":"2.1","method":"a","id":1}"#) else { return XCTFail() }
        XCTAssertEqual(id, RequestID(1))
        guard case .invalid(nil, _) = try classify(#"{"jsonrpc":"2.0","method":"a","id":[]}"#) else { return XCTFail() }
        // Neither method nor result nor error: the connection decides by the id (a broken answer to a request it
        // waits for, else -32600 "no method"); with a null id it is an invalid request at once.
        XCTAssertEqual(try classify(#"{"jsonrpc":"2.0","id":1}"#), .neitherRequestNorResponse(id: RequestID(1)))
        guard case .invalid(_, let noMethod) = try classify(#"{"jsonrpc":"2.0","id":null}"#) else { return XCTFail() }
        XCTAssertEqual(noMethod.code, .invalidRequest)
        guard case .invalid = try classify("1") else { return XCTFail() }
        guard case .invalid = try classify(#"{"jsonrpc":"2.0","method":"a","params":42,"id":1}"#) else { return XCTFail() }
    }

    func testResponses() throws {
        XCTAssertEqual(
            try classify(#"{"jsonrpc":"2.0","result":{"a":1},"id":"pb-1"}"#), .response(id: RequestID("pb-1"), result: .success(["a": 1])))
        let failure = ErrorObject(code: ErrorCode(rawValue: 7), message: "no", data: ["reason": "other"])
        XCTAssertEqual(
            try classify(#"{"jsonrpc":"2.0","error":{"code":7,"message":"no","data":{"reason":"other"}},"id":"pb-2"}"#),
            .response(id: RequestID("pb-2"), result: .failure(failure)))
        let both = #"{"jsonrpc":"2.0","result":1,"error":{"code":1,"message":"x"},"id":3}"#
        guard case .unusableResponse(RequestID(3)?, _) = try classify(both) else { return XCTFail() }
        guard case .unusableResponse(nil, _) = try classify(#"{"jsonrpc":"2.0","result":1,"id":null}"#) else { return XCTFail() }
        // Not answered as a request, for want of "jsonrpc" or of an error object: the id goes to the request it names.
        guard case .unusableResponse(RequestID("pb-1")?, _) = try classify(#"{"id":"pb-1","result":{"accessStatus":"granted"}}"#)
        else { return XCTFail() }
        guard case .unusableResponse(RequestID("pb-1")?, _) = try classify(#"{"jsonrpc":"2.0","id":"pb-1","error":"oops"}"#)
        else { return XCTFail() }
    }

    func testOutgoingShapes() {
        XCTAssertEqual(
            String(decoding: OutgoingMessage.notification(method: "setToken", params: ["token": "t"]), as: UTF8.self),
            #"{"jsonrpc":"2.0","method":"setToken","params":{"token":"t"}}"#)
        XCTAssertEqual(
            String(decoding: OutgoingMessage.request(method: "m", params: [1], id: RequestID("pb-1")), as: UTF8.self),
            #"{"jsonrpc":"2.0","method":"m","params":[1],"id":"pb-1"}"#)
        XCTAssertEqual(
            String(decoding: OutgoingMessage.notification(method: "a\"b\n", params: nil), as: UTF8.self),
            #"{"jsonrpc":"2.0","method":"a\"b\n"}"#)
        XCTAssertEqual(
            String(decoding: OutgoingMessage.request(method: "m", params: nil, id: RequestID(7)), as: UTF8.self),
            #"{"jsonrpc":"2.0","method":"m","id":7}"#)
        XCTAssertEqual(
            String(decoding: OutgoingMessage.response(id: nil, error: .shuttingDown()), as: UTF8.self),
            #"{"jsonrpc":"2.0","id":null,"error":{"code":-32003,"message":"Shutting down","data":{"reason":"the daemon is shutting down"}}}"#
        )
    }

    func testErrorCodes() {
        XCTAssertEqual(
            [ErrorCode.parseError, .invalidRequest, .methodNotFound, .invalidParams, .internalError].map(\.rawValue),
            [-32700, -32600, -32601, -32602, -32603])
        XCTAssertEqual([ErrorCode.requestorNotSet, .shuttingDown, .overloaded].map(\.rawValue), [-32002, -32003, -32004])
        XCTAssertNotNil(ErrorObject.messageTooLarge(limit: 10).data?["limit"])
    }
}
