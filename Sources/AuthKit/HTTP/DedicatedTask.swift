/// A task run for one operation whose callers wait for it some other way
/// than through the task (a refresh flight, ``RefreshCoordinator``), so that
/// a deadline inside it may stop the operation by cancelling the task whole
/// (``withDeadline(_:allowed:display:stoppedBy:_:)``), rather than run the
/// request as a child task of its own to cancel.
///
/// A child task per request costs a task's creation and a switch to it and
/// back: about 0.7 µs of a refresh's 9 µs over an in-memory transport (the
/// `refresh-library` benchmark row), paid with every transport but libcurl
/// (which stops its transfers at a deadline itself): `URLSession`,
/// AsyncHTTPClient, an app's own.
///
/// A deadline claims the task only while none other holds it (one nested in
/// it runs as a child task), and only in the task itself: ``current`` is a
/// task-local value, and tasks started within the operation inherit it, so
/// one that may outlive a claim and meet a deadline of its own (the key-set
/// fetch every caller shares, ``KeySetCache``) starts with it cleared. Once a
/// deadline has cancelled the task, whatever the operation does next is
/// cancelled too: the operation ends with that timeout, which nothing in a
/// refresh recovers from (a timeout a refresh tolerates, fetching the
/// provider's keys, is that fetch's own task's).
package final class DedicatedTask: @unchecked Sendable {
    /// The dedicated task the running code is in, if any.
    @TaskLocal package static var current: DedicatedTask?

    /// Guards every field.
    private let lock = ThreadLock()
    private var task: Task<Void, Never>?
    private var cancelled = false
    private var claimed = false

    package init() {}

    /// The task, once started: a ``cancel()`` that came before it (the
    /// operation ran on the starter's thread until it first waited, with
    /// `Task.immediate`) takes effect now.
    package func attach(_ task: Task<Void, Never>) {
        let cancel = lock.withLock { () -> Bool in
            self.task = task
            return cancelled
        }
        if cancel { task.cancel() }
    }

    /// Cancels the task, now or as soon as it is attached.
    package func cancel() {
        let task = lock.withLock { () -> Task<Void, Never>? in
            cancelled = true
            return self.task
        }
        task?.cancel()
    }

    /// Whether the task is unclaimed, and now the caller's to cancel at its
    /// deadline; ``release()`` when that deadline's operation has ended.
    func claim() -> Bool {
        lock.withLock {
            guard !claimed else { return false }
            claimed = true
            return true
        }
    }

    func release() {
        lock.withLock { claimed = false }
    }
}
