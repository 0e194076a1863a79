//! Trace Lab, the browser half: a Leptos single-page app. Every figure it shows comes from
//! `tracelab-core`; the view only lays them out.

mod app;
mod components;
mod convert;
mod download;
mod embed;
mod i18n;
mod loader;
mod persist;
mod state;

fn main() {
    // A panic message in the browser console, not just "unreachable": a learner can report it.
    std::panic::set_hook(Box::new(|info| web_sys::console::error_1(&info.to_string().into())));
    leptos::mount::mount_to_body(app::App);
}
