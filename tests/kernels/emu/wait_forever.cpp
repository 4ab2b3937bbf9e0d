// Waits for one page of CB "cb_in" that no kernel ever pushes.
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    constexpr uint32_t cb_id = get_named_compile_time_arg_val("cb_in");
    cb_wait_front(cb_id, 1);
}
