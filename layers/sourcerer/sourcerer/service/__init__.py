"""The service half: use cases over the library for many tenants (`core`), the API's shapes (`schemas`),
metering (`billing`), tenants and keys (`tenancy`, `admin`), audits, S3 ingestion, and the composition root
(`wiring.get_service`). It knows nothing of HTTP: `sourcerer.http` maps it onto routes and statuses."""
