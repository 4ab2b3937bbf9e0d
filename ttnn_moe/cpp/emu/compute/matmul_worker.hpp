// Tile matmuls of the compute engines, run on a second host thread.
//
// A tile product's unpack and math depend only on its operand tiles and its DST tile, and the
// scheduler thread (NOC copies, CB bookkeeping, the time model) has plenty else to do meanwhile.
// So a matmul call copies its operand tiles' bytes into a job and goes on; one worker thread per
// scheduler thread takes the jobs in submission order. An engine needs its own jobs done only
// where DST is observed or overwritten (emu/compute/compute_engine.cpp): there the scheduler
// thread runs those of them the worker has not started itself (instead of waiting for the
// worker's backlog of other engines' jobs) and waits only for one the worker is running. A job
// is taken by exactly one thread, and an engine's jobs are taken in order, each after the one
// before it finished, so every DST tile receives the same products in the same order as without
// the worker: results do not depend on the threads' timing, and the scheduler's order of fibers,
// hence the modeled time, is unchanged.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "emu/numerics/matmul_operand.hpp"
#include "program/program_descriptor.hpp"

namespace ttnn_moe::emu {

// One inner step of a block matmul: for r < rows, c < cols, dst[r * cols + c] += A[r] @ B[c]
// (B transposed when transpose_b), each DST tile rounded to bf16 afterwards when round_to_bf16.
struct MatmulJobShape {
    float* dst = nullptr;  // DST tile of (0, 0); the block's tiles follow it contiguously
    uint32_t rows = 1;
    uint32_t cols = 1;
    program::DataFormat format_a = program::DataFormat::Invalid;
    program::DataFormat format_b = program::DataFormat::Invalid;
    uint32_t tile_bytes_a = 0;
    uint32_t tile_bytes_b = 0;
    bool transpose_b = false;
    bool round_to_bf16 = false;
};

// Operand buffers of one thread running jobs: an A tile and up to 16 B tiles.
struct MatmulScratch {
    static constexpr uint32_t kMaxBlockSide = 16;  // a block has at most DST's 16 tiles, so at most 16 rows or columns
    MatmulScratch();
    // The calling thread's, for jobs run where they are issued (no worker thread). One per thread,
    // not per compute engine: a run creates an engine per core, and ~100 KiB of fresh operand
    // buffers each cost page faults at every run.
    static MatmulScratch& of_this_thread();
    std::vector<numerics::MatmulOperand> a, b;  // one, kMaxBlockSide
};

// Runs one job on the calling thread, reading tile r of A at a_tiles[r] and tile c of B at b_tiles[c].
void run_matmul_job(const MatmulJobShape& shape, const uint8_t* const* a_tiles, const uint8_t* const* b_tiles,
                    MatmulScratch& scratch);

class MatmulWorker {
public:
    // The worker thread's name (/proc/<pid>/task/<tid>/comm).
    static constexpr const char* kThreadName = "emu-matmul";
    // The worker of the calling thread (started on first use), or nullptr when matmuls stay on the
    // calling thread (switched off).
    static MatmulWorker* for_this_thread();
    // Process-wide switch for engines created later; on unless TTNN_MOE_EMU_MATMUL_THREAD=0 at start-up.
    static void set_enabled(bool enabled);
    static bool enabled();

    ~MatmulWorker();
    MatmulWorker(const MatmulWorker&) = delete;
    MatmulWorker& operator=(const MatmulWorker&) = delete;

    // Queues a job whose operand tiles are copied from a_tiles[r] and b_tiles[c] before this
    // returns; its sequence number.
    uint64_t submit(const MatmulJobShape& shape, const uint8_t* const* a_tiles, const uint8_t* const* b_tiles);
    // Returns once the jobs `sequences` (one engine's, in submission order) have run: those the
    // worker has not taken run here. Rethrows a job's exception.
    void finish(const std::vector<uint64_t>& sequences);

private:
    enum JobState : uint8_t { Pending, Running, Done };
    struct Job {
        MatmulJobShape shape;
        uint64_t data_offset = 0;  // in data_, of the A tiles then the B tiles
        uint64_t data_end = 0;     // bytes handed out up to and including this job's (monotonic)
        std::atomic<uint8_t> state{Pending};
    };

    MatmulWorker();
    void run();
    void run_job(const Job& job, MatmulScratch& scratch) const;
    // Takes a pending job and runs it on this thread, or waits until the thread that took it is done.
    void take_or_await(Job& job, MatmulScratch& scratch);
    void wake_worker();
    // Wakes the thread sleeping on `sleeper` (work_ready_ or work_done_).
    void wake(std::condition_variable& sleeper);
    void wait_for_room(uint64_t job_end, uint64_t bytes_end);
    void rethrow_failure();
    static constexpr uint64_t kJobs = 512;
    static constexpr uint64_t kDataBytes = 2u << 20;

    std::unique_ptr<Job[]> jobs_;
    std::unique_ptr<uint8_t[]> data_;
    uint64_t submitted_ = 0;  // written by the submitting thread only
    uint64_t data_head_ = 0;  // bytes handed out (monotonic), submitting thread only
    std::atomic<uint64_t> published_{0};
    std::atomic<uint64_t> completed_{0};
    std::atomic<uint64_t> data_released_{0};
    // Sleeping on the other side: the mutex and condition variables are touched only then.
    std::atomic<bool> worker_sleeping_{false};
    std::atomic<bool> submitter_sleeping_{false};
    std::mutex mutex_;
    std::condition_variable work_ready_;
    std::condition_variable work_done_;
    bool stopping_ = false;
    // The first job that threw on the worker, rethrown by the next finish.
    std::atomic<bool> failed_{false};
    std::exception_ptr error_;
    MatmulScratch worker_scratch_;
    MatmulScratch submitter_scratch_;
    std::thread thread_;
};

}  // namespace ttnn_moe::emu
