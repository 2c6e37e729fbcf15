import JSON
