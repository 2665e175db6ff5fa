"""The reference UPP server (User Profile Protocol 1.0.0, JSON-RPC 2.0, levels 1-3, ontology user/v1).

`service.UppService` is the engine; `rpc` the JSON-RPC 2.0 message handling; `store` the sqlite
store; `extractor` text → events; `ranking` retrieve's relevance; `tasks` contextualize's
background tasks; `exports` ExportPackage files; `params` params checking; `labels` the ontology;
`stdio` the stdio binding; `faults` the deliberate defects. The HTTP binding is `POST /upp` in
`reference_impl/ump/http_app.py`. The contract is docs/live-upp.md.
"""
