module frequency-gateway.local/cluster/pause

go 1.26.0
