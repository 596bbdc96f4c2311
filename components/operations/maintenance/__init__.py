"""TPU host maintenance: the ticket before it, what one zonal wave takes, and the gate that starts it one pool at a time (its program's files run in the gate's pod)."""
