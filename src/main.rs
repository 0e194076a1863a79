//! The lab's bundle: mounts the lab (`trace_lab::app::App`, the library in `lib.rs`) on the page.

fn main() {
    tracelab_web::install_panic_hook();
    leptos::mount::mount_to_body(trace_lab::app::App);
}
