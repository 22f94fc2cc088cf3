#!/bin/sh
# A stand-in for a cluster job.
echo on the cluster
