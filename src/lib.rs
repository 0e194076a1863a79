//! Trace Lab, the browser half: a Leptos single-page app. Every figure it shows comes from
//! `tracelab-core`; the view only lays them out. A library, so the bench page
//! (`pages/bench`) can drive the lab's own state; `main.rs` mounts [`app::App`].

pub mod app;
pub mod components;
pub mod convert;
pub mod embed;
pub mod i18n;
pub mod loader;
pub mod persist;
pub mod state;
