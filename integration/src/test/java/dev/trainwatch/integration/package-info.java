/** End-to-end tests: real processes (promtool, Prometheus, Alertmanager, the fake NVML library) on loopback. */
package dev.trainwatch.integration;
