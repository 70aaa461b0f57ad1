"""What operators read: logs, Prometheus metrics, the metrics port."""
