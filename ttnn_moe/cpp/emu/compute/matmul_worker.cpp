#include "emu/compute/matmul_worker.hpp"

#include <pthread.h>

#include <array>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

#include "emu/numerics/numerics.hpp"

namespace ttnn_moe::emu {

using numerics::TILE_ELEMENTS;

namespace {

// Off unless asked for: it pays only when a host core is free for the worker. On a 2-core host
// shared with other work the handoffs cost more than the second thread gains (the matmul
// benchmark and moe_bmm ran slower in wall time there, at 25-70% more CPU per tile matmul).
bool enabled_at_start() {
    const char* env = std::getenv("TTNN_MOE_EMU_MATMUL_THREAD");
    return !(env && std::string(env) == "0");
}

std::atomic<bool> g_enabled{enabled_at_start()};

thread_local std::unique_ptr<MatmulWorker> t_worker;

// A forked child has only the forking thread: its worker thread is gone, so the child starts
// a fresh one (the parent's object is left alone; destroying it would join a thread that does
// not exist).
void forget_worker_in_child() {
    (void)t_worker.release();
}

// Pauses before sleeping: a job or a completion usually follows within microseconds, and a sleep
// costs the other side a futex wake. The worker waits longer for work (some 50 us: a scheduler
// pass over many cores) than the submitter for room or for a job the worker is running.
constexpr int kSpins = 256;
constexpr int kWorkerSpins = 4096;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

}  // namespace

MatmulWorker* MatmulWorker::for_this_thread() {
    if (!g_enabled.load(std::memory_order_relaxed)) return nullptr;
    if (!t_worker) {
        static const int registered = pthread_atfork(nullptr, nullptr, &forget_worker_in_child);
        (void)registered;
        t_worker.reset(new MatmulWorker());
    }
    return t_worker.get();
}

void MatmulWorker::set_enabled(bool enabled) {
    g_enabled.store(enabled, std::memory_order_relaxed);
}

bool MatmulWorker::enabled() {
    return g_enabled.load(std::memory_order_relaxed);
}

MatmulWorker::MatmulWorker() : jobs_(new Job[kJobs]), data_(new uint8_t[kDataBytes]) {
    thread_ = std::thread([this] { run(); });
    // Named so that tools and tests can tell it from other threads of the process.
    pthread_setname_np(thread_.native_handle(), kThreadName);
}

MatmulWorker::~MatmulWorker() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stopping_ = true;
    }
    work_ready_.notify_one();
    thread_.join();
}

void MatmulWorker::wake_worker() {
    if (worker_sleeping_.load(std::memory_order_seq_cst)) wake(work_ready_);
}

void MatmulWorker::wake(std::condition_variable& sleeper) {
    // Taking the mutex orders this after the sleeper's last look at its condition (made under it,
    // just before it waits). The notify follows the unlock: notified under the lock, the woken
    // thread would block at once on the mutex still held here (a second futex call each way).
    std::unique_lock<std::mutex> lock(mutex_);
    lock.unlock();
    sleeper.notify_one();
}

void MatmulWorker::wait_for_room(uint64_t job_end, uint64_t bytes_end) {
    const auto room = [&] {
        return job_end <= completed_.load(std::memory_order_acquire) + kJobs &&
               bytes_end <= data_released_.load(std::memory_order_acquire) + kDataBytes;
    };
    for (int i = 0; i < kSpins; ++i) {
        if (room()) return;
        cpu_relax();
    }
    std::unique_lock<std::mutex> lock(mutex_);
    submitter_sleeping_.store(true, std::memory_order_seq_cst);
    work_done_.wait(lock, room);
    submitter_sleeping_.store(false, std::memory_order_relaxed);
}

uint64_t MatmulWorker::submit(const MatmulJobShape& shape, const uint8_t* const* a_tiles,
                              const uint8_t* const* b_tiles) {
    const uint64_t a_bytes = uint64_t(shape.rows) * shape.tile_bytes_a;
    const uint64_t bytes = a_bytes + uint64_t(shape.cols) * shape.tile_bytes_b;
    // A job's bytes are contiguous: one that would cross the end of the ring starts at its beginning.
    uint64_t start = data_head_;
    if (start % kDataBytes + bytes > kDataBytes) start += kDataBytes - start % kDataBytes;
    wait_for_room(submitted_ + 1, start + bytes);

    Job& job = jobs_[submitted_ % kJobs];
    job.shape = shape;
    job.data_offset = start % kDataBytes;
    job.data_end = start + bytes;
    job.state.store(Pending, std::memory_order_relaxed);  // published below
    uint8_t* out = data_.get() + job.data_offset;
    for (uint32_t r = 0; r < shape.rows; ++r) std::memcpy(out + r * shape.tile_bytes_a, a_tiles[r], shape.tile_bytes_a);
    for (uint32_t c = 0; c < shape.cols; ++c)
        std::memcpy(out + a_bytes + c * shape.tile_bytes_b, b_tiles[c], shape.tile_bytes_b);
    data_head_ = start + bytes;
    ++submitted_;
    published_.store(submitted_, std::memory_order_seq_cst);
    wake_worker();
    return submitted_;
}

void MatmulWorker::run_job(const Job& job, MatmulScratch& scratch) const {
    const MatmulJobShape& shape = job.shape;
    const uint8_t* data = data_.get() + job.data_offset;
    const uint8_t* b_data = data + uint64_t(shape.rows) * shape.tile_bytes_a;
    std::array<const uint8_t*, MatmulScratch::kMaxBlockSide> a_tiles, b_tiles;
    for (uint32_t r = 0; r < shape.rows; ++r) a_tiles[r] = data + uint64_t(r) * shape.tile_bytes_a;
    for (uint32_t c = 0; c < shape.cols; ++c) b_tiles[c] = b_data + uint64_t(c) * shape.tile_bytes_b;
    run_matmul_job(shape, a_tiles.data(), b_tiles.data(), scratch);
}

void MatmulWorker::take_or_await(Job& job, MatmulScratch& scratch) {
    uint8_t expected = Pending;
    if (job.state.compare_exchange_strong(expected, Running, std::memory_order_acquire)) {
        // Done even when it throws: the other thread may be waiting for it.
        struct MarkDone {
            Job& job;
            ~MarkDone() { job.state.store(Done, std::memory_order_release); }
        } mark{job};
        run_job(job, scratch);
        return;
    }
    // The other thread runs it: one job, a few microseconds, unless that thread lost its core.
    for (int i = 0; job.state.load(std::memory_order_acquire) != Done; ++i) {
        if (i < kSpins)
            cpu_relax();
        else
            std::this_thread::yield();
    }
}

void MatmulWorker::finish(const std::vector<uint64_t>& sequences) {
    for (const uint64_t sequence : sequences) {
        // A completed job's slot may already hold a later job; an uncompleted one's cannot (only
        // this thread submits, and only into slots the worker has passed).
        if (completed_.load(std::memory_order_acquire) >= sequence) continue;
        take_or_await(jobs_[(sequence - 1) % kJobs], submitter_scratch_);
    }
    rethrow_failure();
}

void MatmulWorker::rethrow_failure() {
    if (!failed_.load(std::memory_order_acquire)) return;
    // The run that submitted the failing job ends with it; later runs start clean.
    std::exception_ptr error;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        error = std::exchange(error_, nullptr);
        failed_.store(false, std::memory_order_relaxed);
    }
    if (error) std::rethrow_exception(error);
}

void MatmulWorker::run() {
    uint64_t next = 0;
    for (;;) {
        for (int i = 0; published_.load(std::memory_order_acquire) == next; ++i) {
            if (i < kWorkerSpins) {
                cpu_relax();
                continue;
            }
            std::unique_lock<std::mutex> lock(mutex_);
            worker_sleeping_.store(true, std::memory_order_seq_cst);
            work_ready_.wait(lock, [&] { return stopping_ || published_.load(std::memory_order_seq_cst) != next; });
            worker_sleeping_.store(false, std::memory_order_relaxed);
            if (published_.load(std::memory_order_acquire) == next) return;  // stopping, nothing left
        }
        Job& job = jobs_[next % kJobs];
        try {
            take_or_await(job, worker_scratch_);
        } catch (...) {
            std::lock_guard<std::mutex> lock(mutex_);
            if (!error_) error_ = std::current_exception();
            failed_.store(true, std::memory_order_release);
        }
        data_released_.store(job.data_end, std::memory_order_release);
        completed_.store(++next, std::memory_order_seq_cst);
        if (submitter_sleeping_.load(std::memory_order_seq_cst)) wake(work_done_);
    }
}

MatmulScratch::MatmulScratch() : a(1), b(kMaxBlockSide) {}

MatmulScratch& MatmulScratch::of_this_thread() {
    thread_local MatmulScratch scratch;
    return scratch;
}

// Each B tile is loaded once and reused for every A tile; each DST tile gets its one product and
// then its rounding. The operand tiles stay in place until the job is done (a bf16 operand's values
// are unpacked from them only if the generic kernel runs).
void run_matmul_job(const MatmulJobShape& shape, const uint8_t* const* a_tiles, const uint8_t* const* b_tiles,
                    MatmulScratch& scratch) {
    for (uint32_t c = 0; c < shape.cols; ++c)
        numerics::load_matmul_b(shape.format_b, b_tiles[c], shape.transpose_b, scratch.b[c]);
    numerics::MatmulOperand& a = scratch.a[0];
    for (uint32_t r = 0; r < shape.rows; ++r) {
        numerics::load_matmul_a(shape.format_a, a_tiles[r], a);
        for (uint32_t c = 0; c < shape.cols; ++c) {
            float* dst = shape.dst + size_t(r * shape.cols + c) * TILE_ELEMENTS;
            numerics::matmul_tile_accumulate(a, scratch.b[c], dst);
            if (shape.round_to_bf16) numerics::round_in_place(program::DataFormat::Float16_b, dst, TILE_ELEMENTS);
        }
    }
}

}  // namespace ttnn_moe::emu
