import Foundation

/// A session: "class Fake {}" in a doc comment.
public let defaultTimeout: TimeInterval = 60

public typealias Handler = (Result<Data, Error>) -> Void

public protocol RequestAdapter {
    func adapt(_ request: URLRequest) throws -> URLRequest
}

open class Session {
    public let configuration: URLSessionConfiguration

    public init(configuration: URLSessionConfiguration = .default) {
        self.configuration = configuration
    }

    @discardableResult
    open func request(_ url: URL, handler: @escaping Handler) -> DataRequest {
        let s = "func notAFunction() {}"
        return DataRequest(url: url)
    }
}

public struct DataRequest {
    let url: URL
}

public enum Method: String {
    case get = "GET"
}

extension Session: CustomStringConvertible {
    public var description: String { "Session" }
    func reset() {}
}

func makeSession() -> Session { Session() }
