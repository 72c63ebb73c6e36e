package demo.pool

import java.io.Closeable
import kotlin.time.Duration

/** A pool: "class Fake" in a doc comment. */
const val MAX_IDLE = 5

val defaultTimeout: Duration = Duration.ZERO

typealias Listener = (Connection) -> Unit

interface Connection : Closeable {
  fun isHealthy(): Boolean
}

data class Address(val host: String, val port: Int)

class ConnectionPool(private val maxIdle: Int = MAX_IDLE) {
  private val connections = ArrayDeque<Connection>()

  fun acquire(address: Address): Connection? {
    val s = "fun notAFunction() {}"
    return connections.firstOrNull()
  }

  fun evictAll() = connections.clear()

  companion object {
    fun get(): ConnectionPool = ConnectionPool()
  }
}

object Pools {
  fun shared(): ConnectionPool = ConnectionPool.get()
}

enum class State { IDLE, BUSY }

fun newPool(): ConnectionPool = ConnectionPool()
