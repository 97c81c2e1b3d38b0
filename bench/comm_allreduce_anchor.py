# The anchor of bench/comm_allreduce.sh: torch.distributed.all_reduce (Gloo, float32 sum) between 2
# local processes, 1 KB .. 64 MB, the repetitions of fixture_dist.bench, one thread per rank. Writes
# {bytes: microseconds per call} as JSON to the file named by its argument.
import json, socket, sys, time
import torch, torch.distributed as dist, torch.multiprocessing as mp

def work(rank, port, out):
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=2)
    times, size = {}, 1 << 10
    while size <= 64 << 20:
        t = torch.ones(size // 4)
        reps = 2000 if size <= 1 << 16 else 50 if size <= 4 << 20 else 8
        dist.all_reduce(t)
        dist.barrier()
        start = time.perf_counter()
        for _ in range(reps):
            dist.all_reduce(t)
        times[size] = (time.perf_counter() - start) / reps * 1e6
        size *= 4
    if rank == 0:
        json.dump(times, open(out, "w"))
    dist.destroy_process_group()

if __name__ == "__main__":
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    mp.spawn(work, args=(port, sys.argv[1]), nprocs=2)
