"""The paper's protocol, run by the portal: the catalogue of protocols (data files), the prompts they make,
the SQL taken from an answer, and the runner that asks a model endpoint (see ARCHITECTURE.md)."""
