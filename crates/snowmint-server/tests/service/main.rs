//! The service in-process: its HTTP routes and gRPC API on a node the test
//! controls (a static slot, a claim it switches, a hand-driven clock), the
//! OpenAPI document, the calculator page, readiness and the socket layer.
//! One test binary, so that the service and the fixtures link once.

mod api;
mod claims;
mod error_kinds;
mod gate;
mod grpc;
mod grpc_inspect;
mod grpc_whois;
mod inspect;
mod lead;
mod openapi;
mod page;
mod readiness;
mod socket;
