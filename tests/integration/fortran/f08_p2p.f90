! Point-to-point through the Fortran 2008 bindings (use mpi_f08): blocking
! MPI_Send / MPI_Recv with TYPE(MPI_Status) (status%MPI_SOURCE,
! status%MPI_TAG, MPI_Get_count), keyword arguments named as in the standard,
! MPI_STATUS_IGNORE; MPI_Isend / MPI_Irecv completed by MPI_Waitall with an
! array of TYPE(MPI_Status) and with MPI_STATUSES_IGNORE, by MPI_Waitany
! (1-based index, MPI_UNDEFINED once all are null), MPI_Testall and
! MPI_Testsome; completed requests == MPI_REQUEST_NULL (the == and /=
! operators on handles); MPI_Sendrecv and MPI_Sendrecv_replace around a ring;
! MPI_Probe / MPI_Iprobe with MPI_ANY_SOURCE / MPI_ANY_TAG (LOGICAL flag);
! MPI_Mprobe / MPI_Mrecv and MPI_Improbe / MPI_Imrecv with TYPE(MPI_Message);
! persistent MPI_Send_init / MPI_Recv_init with MPI_Start / MPI_Startall and
! MPI_Request_free; MPI_PROC_NULL (and MPI_MESSAGE_NO_PROC); the optional
! ierror argument, present (checked against MPI_SUCCESS) or absent; and MPI
! 4.0's MPI_Isendrecv / MPI_Isendrecv_replace; and MPI 4.0's large-count
! forms, chosen by the generics from INTEGER(KIND=MPI_COUNT_KIND) counts, or
! called by name where only kinds of one size tell them apart.
program f08_p2p
  use mpi_f08
  use ftest
  implicit none
  integer, parameter :: maxn = 16
  integer :: ierr, rank, nprocs, right, left
  type(MPI_Comm) :: comm

  call MPI_Init(ierr)
  call check_int(ierr, MPI_SUCCESS, 'MPI_Init ierror')
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  call check_int(ierr, MPI_SUCCESS, 'MPI_Comm_size ierror')
  call check(nprocs <= maxn, 'more ranks than this test handles')
  right = mod(rank + 1, nprocs)
  left = mod(rank + nprocs - 1, nprocs)
  ! Each phase on a communicator of its own: no message can match another's.
  call MPI_Comm_dup(MPI_COMM_WORLD, comm)
  call blocking()
  call all_pairs()
  call wait_any()
  call test_all_some()
  call ring_sendrecv()
  call probing()
  call matched_probe()
  call persistent()
  call proc_null()
  call isendrecv()
  call large_counts()
  call MPI_Comm_free(comm, ierr)
  call check_int(ierr, MPI_SUCCESS, 'MPI_Comm_free ierror')
  call check(comm == MPI_COMM_NULL, 'MPI_Comm_free: handle not MPI_COMM_NULL')
  if (rank == 0) write (*, '(a)') 'f08_p2p: OK'
  call MPI_Finalize(ierr)
  call check_int(ierr, MPI_SUCCESS, 'MPI_Finalize ierror')

contains

  ! A token around the ring with blocking calls (rank 0 sends first, the
  ! others receive first, so no buffering is needed); the receive takes any
  ! tag and reads the envelope back. Needs two ranks.
  subroutine blocking()
    integer :: out(maxn), in(maxn), i, count
    type(MPI_Status) :: st
    if (nprocs < 2) return
    out = [(rank * 100 + i, i = 1, maxn)]
    in = -1
    if (rank == 0) then
      call MPI_Send(out, rank + 1, MPI_INTEGER, right, 10 + rank, comm, ierr)
      call check_int(ierr, MPI_SUCCESS, 'MPI_Send ierror')
      call MPI_Recv(in, maxn, MPI_INTEGER, left, MPI_ANY_TAG, comm, st, ierr)
      call check_int(ierr, MPI_SUCCESS, 'MPI_Recv ierror')
    else
      call MPI_Recv(in, maxn, MPI_INTEGER, left, MPI_ANY_TAG, comm, st)
      call MPI_Send(out, rank + 1, MPI_INTEGER, right, 10 + rank, comm)
    end if
    call check_int(st%MPI_SOURCE, left, 'MPI_Recv: status%MPI_SOURCE')
    call check_int(st%MPI_TAG, 10 + left, 'MPI_Recv: status%MPI_TAG')
    call MPI_Get_count(st, MPI_INTEGER, count, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Get_count ierror')
    call check_int(count, left + 1, 'MPI_Recv: MPI_Get_count')
    do i = 1, left + 1
      call check_int(in(i), left * 100 + i, 'MPI_Recv: received element')
    end do
    call check_int(in(left + 2), -1, 'MPI_Recv: element past the message')
    ! Again with keyword arguments (the standard's dummy names), status ignored.
    in = -1
    if (rank == 0) then
      call MPI_Send(buf=out, count=2, datatype=MPI_INTEGER, dest=right, tag=11, &
                    comm=comm, ierror=ierr)
      call MPI_Recv(buf=in, count=maxn, datatype=MPI_INTEGER, source=left, tag=11, &
                    comm=comm, status=MPI_STATUS_IGNORE, ierror=ierr)
    else
      call MPI_Recv(buf=in, count=maxn, datatype=MPI_INTEGER, source=left, tag=11, &
                    comm=comm, status=MPI_STATUS_IGNORE)
      call MPI_Send(buf=out, count=2, datatype=MPI_INTEGER, dest=right, tag=11, comm=comm)
    end if
    call check_int(ierr, MPI_SUCCESS, 'keyword MPI_Send / MPI_Recv ierror')
    call check(in(1) == left * 100 + 1 .and. in(2) == left * 100 + 2 .and. in(3) == -1, &
               'keyword MPI_Recv with MPI_STATUS_IGNORE: data')
  end subroutine blocking

  ! Every rank exchanges one message with every rank (itself included),
  ! completed by MPI_Waitall into TYPE(MPI_Status) statuses, then again with
  ! MPI_STATUSES_IGNORE.
  subroutine all_pairs()
    integer, asynchronous :: in(maxn), out(maxn)
    type(MPI_Request) :: reqs(2 * maxn)
    type(MPI_Status) :: stats(2 * maxn)
    integer :: p, count
    in = -1
    do p = 0, nprocs - 1
      out(p + 1) = rank * 100 + p
      call MPI_Irecv(in(p + 1), 1, MPI_INTEGER, p, 20 + rank, comm, reqs(p + 1), ierr)
      call check_int(ierr, MPI_SUCCESS, 'MPI_Irecv ierror')
      call check(reqs(p + 1) /= MPI_REQUEST_NULL, 'MPI_Irecv returned MPI_REQUEST_NULL')
    end do
    ! The tag names the destination.
    do p = 0, nprocs - 1
      call MPI_Isend(out(p + 1), 1, MPI_INTEGER, p, 20 + p, comm, reqs(nprocs + p + 1))
    end do
    call MPI_Waitall(2 * nprocs, reqs, stats, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Waitall ierror')
    do p = 0, nprocs - 1
      call check_int(in(p + 1), p * 100 + rank, 'MPI_Waitall: received value')
      call check_int(stats(p + 1)%MPI_SOURCE, p, 'MPI_Waitall: statuses(i)%MPI_SOURCE')
      call check_int(stats(p + 1)%MPI_TAG, 20 + rank, 'MPI_Waitall: statuses(i)%MPI_TAG')
      call MPI_Get_count(stats(p + 1), MPI_INTEGER, count)
      call check_int(count, 1, 'MPI_Waitall: MPI_Get_count of statuses(i)')
    end do
    do p = 1, 2 * nprocs
      call check(reqs(p) == MPI_REQUEST_NULL, 'MPI_Waitall: request not MPI_REQUEST_NULL')
    end do
    ! Same exchange, statuses ignored.
    in = -1
    do p = 0, nprocs - 1
      call MPI_Irecv(in(p + 1), 1, MPI_INTEGER, p, 21, comm, reqs(p + 1))
      call MPI_Isend(out(p + 1), 1, MPI_INTEGER, p, 21, comm, reqs(nprocs + p + 1), ierr)
      call check_int(ierr, MPI_SUCCESS, 'MPI_Isend ierror')
    end do
    call MPI_Waitall(2 * nprocs, reqs, MPI_STATUSES_IGNORE, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Waitall with MPI_STATUSES_IGNORE ierror')
    do p = 0, nprocs - 1
      call check_int(in(p + 1), p * 100 + rank, 'MPI_STATUSES_IGNORE: received value')
      call check(reqs(p + 1) == MPI_REQUEST_NULL .and. reqs(nprocs + p + 1) == MPI_REQUEST_NULL, &
                 'MPI_STATUSES_IGNORE: request not MPI_REQUEST_NULL')
    end do
  end subroutine all_pairs

  ! Receives from every rank completed one at a time by MPI_Waitany: each
  ! index is 1-based, names the request whose source it reports, and that
  ! request is null afterwards; with all requests null the index is
  ! MPI_UNDEFINED.
  subroutine wait_any()
    integer, asynchronous :: in(maxn), out
    type(MPI_Request) :: reqs(maxn), sreqs(maxn)
    type(MPI_Status) :: st
    logical :: seen(maxn)
    integer :: p, i, idx
    out = 1000 + rank
    do p = 0, nprocs - 1
      call MPI_Irecv(in(p + 1), 1, MPI_INTEGER, p, 30, comm, reqs(p + 1))
    end do
    do p = 0, nprocs - 1
      call MPI_Isend(out, 1, MPI_INTEGER, p, 30, comm, sreqs(p + 1))
    end do
    seen = .false.
    do i = 1, nprocs
      call MPI_Waitany(nprocs, reqs, idx, st, ierr)
      call check_int(ierr, MPI_SUCCESS, 'MPI_Waitany ierror')
      call check(idx >= 1 .and. idx <= nprocs, 'MPI_Waitany: index out of 1..count')
      call check(.not. seen(idx), 'MPI_Waitany: index returned twice')
      seen(idx) = .true.
      call check_int(st%MPI_SOURCE, idx - 1, 'MPI_Waitany: index vs status%MPI_SOURCE')
      call check_int(in(idx), 1000 + idx - 1, 'MPI_Waitany: received value')
      call check(reqs(idx) == MPI_REQUEST_NULL, 'MPI_Waitany: completed request not null')
    end do
    call MPI_Waitany(nprocs, reqs, idx, st)
    call check_int(idx, MPI_UNDEFINED, 'MPI_Waitany on null requests: index')
    call MPI_Waitall(nprocs, sreqs, MPI_STATUSES_IGNORE)
  end subroutine wait_any

  ! MPI_Testall polled until it reports completion (then every request is
  ! null and every status filled), then MPI_Testsome polled until every
  ! index in 1..count has been reported exactly once.
  subroutine test_all_some()
    integer, asynchronous :: in(maxn), out
    type(MPI_Request) :: reqs(2 * maxn)
    type(MPI_Status) :: stats(2 * maxn)
    integer :: p, i, done, outcount, indices(2 * maxn), count
    logical :: flag, seen(2 * maxn)
    out = 2000 + rank
    in = -1
    do p = 0, nprocs - 1
      call MPI_Irecv(in(p + 1), 1, MPI_INTEGER, p, 40, comm, reqs(p + 1))
      call MPI_Isend(out, 1, MPI_INTEGER, p, 40, comm, reqs(nprocs + p + 1))
    end do
    flag = .false.
    do while (.not. flag)
      call MPI_Testall(2 * nprocs, reqs, flag, stats, ierr)
      call check_int(ierr, MPI_SUCCESS, 'MPI_Testall ierror')
    end do
    do p = 0, nprocs - 1
      call check_int(in(p + 1), 2000 + p, 'MPI_Testall: received value')
      call check_int(stats(p + 1)%MPI_SOURCE, p, 'MPI_Testall: statuses(i)%MPI_SOURCE')
      call check_int(stats(p + 1)%MPI_TAG, 40, 'MPI_Testall: statuses(i)%MPI_TAG')
      call MPI_Get_count(stats(p + 1), MPI_INTEGER, count)
      call check_int(count, 1, 'MPI_Testall: MPI_Get_count')
    end do
    do i = 1, 2 * nprocs
      call check(reqs(i) == MPI_REQUEST_NULL, 'MPI_Testall: request not MPI_REQUEST_NULL')
    end do
    ! Testall on null requests only: complete at once.
    call MPI_Testall(2 * nprocs, reqs, flag, MPI_STATUSES_IGNORE)
    call check(flag, 'MPI_Testall on null requests: flag')

    in = -1
    do p = 0, nprocs - 1
      call MPI_Irecv(in(p + 1), 1, MPI_INTEGER, p, 41, comm, reqs(p + 1))
      call MPI_Isend(out, 1, MPI_INTEGER, p, 41, comm, reqs(nprocs + p + 1))
    end do
    seen = .false.
    done = 0
    do while (done < 2 * nprocs)
      call MPI_Testsome(2 * nprocs, reqs, outcount, indices, stats, ierr)
      call check_int(ierr, MPI_SUCCESS, 'MPI_Testsome ierror')
      call check(outcount >= 0 .and. outcount <= 2 * nprocs, 'MPI_Testsome: outcount')
      do i = 1, outcount
        p = indices(i)
        call check(p >= 1 .and. p <= 2 * nprocs, 'MPI_Testsome: index out of 1..count')
        call check(.not. seen(p), 'MPI_Testsome: index returned twice')
        seen(p) = .true.
        call check(reqs(p) == MPI_REQUEST_NULL, 'MPI_Testsome: completed request not null')
        if (p <= nprocs) then
          call check_int(stats(i)%MPI_SOURCE, p - 1, 'MPI_Testsome: status%MPI_SOURCE')
          call check_int(in(p), 2000 + p - 1, 'MPI_Testsome: received value')
        end if
      end do
      done = done + outcount
    end do
    call MPI_Testsome(2 * nprocs, reqs, outcount, indices, MPI_STATUSES_IGNORE)
    call check_int(outcount, MPI_UNDEFINED, 'MPI_Testsome on null requests: outcount')
  end subroutine test_all_some

  ! MPI_Sendrecv: send to the right, receive from the left (any tag), check
  ! the envelope; MPI_Sendrecv_replace shifts one buffer a full turn round
  ! the ring, one step at a time, so every rank ends with its own values.
  subroutine ring_sendrecv()
    integer :: out(3), in(4), buf(3), count, step, from
    type(MPI_Status) :: st
    out = [rank, 2 * rank, 3 * rank]
    in = -1
    call MPI_Sendrecv(out, 3, MPI_INTEGER, right, 50 + rank, in, 4, MPI_INTEGER, left, &
                      MPI_ANY_TAG, comm, st, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Sendrecv ierror')
    call check_int(st%MPI_SOURCE, left, 'MPI_Sendrecv: status%MPI_SOURCE')
    call check_int(st%MPI_TAG, 50 + left, 'MPI_Sendrecv: status%MPI_TAG')
    call MPI_Get_count(st, MPI_INTEGER, count)
    call check_int(count, 3, 'MPI_Sendrecv: MPI_Get_count')
    call check(all(in == [left, 2 * left, 3 * left, -1]), 'MPI_Sendrecv: received data')
    buf = out
    do step = 1, nprocs
      call MPI_Sendrecv_replace(buf, 3, MPI_INTEGER, right, 51, left, 51, comm, st, ierr)
      call check_int(ierr, MPI_SUCCESS, 'MPI_Sendrecv_replace ierror')
      call check_int(st%MPI_SOURCE, left, 'MPI_Sendrecv_replace: status%MPI_SOURCE')
      from = mod(rank - step + 2 * nprocs, nprocs)
      call check(all(buf == [from, 2 * from, 3 * from]), 'MPI_Sendrecv_replace: data')
    end do
    call MPI_Sendrecv_replace(buf, 3, MPI_INTEGER, right, 52, left, 52, comm, &
                              MPI_STATUS_IGNORE)
    call check(all(buf == [left, 2 * left, 3 * left]), &
               'MPI_Sendrecv_replace with MPI_STATUS_IGNORE: data')
  end subroutine ring_sendrecv

  ! MPI_Probe then MPI_Iprobe, both with MPI_ANY_SOURCE / MPI_ANY_TAG, report
  ! the envelope and size of the one message sent to each rank; once it is
  ! received nothing is left to probe.
  subroutine probing()
    integer, asynchronous :: out(maxn + 2)
    integer :: in(maxn + 2), count, i
    type(MPI_Request) :: req
    type(MPI_Status) :: st
    logical :: flag
    out = [(rank * 10 + i, i = 1, maxn + 2)]
    call MPI_Isend(out, rank + 2, MPI_INTEGER, right, 60 + rank, comm, req)
    call MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, st, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Probe ierror')
    call check_int(st%MPI_SOURCE, left, 'MPI_Probe: status%MPI_SOURCE')
    call check_int(st%MPI_TAG, 60 + left, 'MPI_Probe: status%MPI_TAG')
    call MPI_Get_count(st, MPI_INTEGER, count)
    call check_int(count, left + 2, 'MPI_Probe: MPI_Get_count')
    call MPI_Recv(in, count, MPI_INTEGER, st%MPI_SOURCE, st%MPI_TAG, comm, MPI_STATUS_IGNORE)
    call check_int(in(count), left * 10 + count, 'MPI_Probe: message received after it')
    call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Wait ierror')
    call check(req == MPI_REQUEST_NULL, 'MPI_Wait: request not MPI_REQUEST_NULL')
    ! Between two barriers, nothing is in flight on comm.
    call MPI_Barrier(comm)
    call MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, flag, st, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Iprobe ierror')
    call check(.not. flag, 'MPI_Iprobe: flag set with no message pending')
    call MPI_Barrier(comm)
    call MPI_Isend(out, 2, MPI_INTEGER, right, 61, comm, req)
    flag = .false.
    do while (.not. flag)
      call MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, flag, st)
    end do
    call check_int(st%MPI_SOURCE, left, 'MPI_Iprobe: status%MPI_SOURCE')
    call check_int(st%MPI_TAG, 61, 'MPI_Iprobe: status%MPI_TAG')
    call MPI_Get_count(st, MPI_INTEGER, count)
    call check_int(count, 2, 'MPI_Iprobe: MPI_Get_count')
    call MPI_Recv(in, 2, MPI_INTEGER, left, 61, comm, MPI_STATUS_IGNORE)
    call MPI_Wait(req, MPI_STATUS_IGNORE)
    call MPI_Barrier(comm)
  end subroutine probing

  ! Matched probes: MPI_Mprobe hands back a TYPE(MPI_Message) that MPI_Mrecv
  ! receives (and sets to MPI_MESSAGE_NULL); MPI_Improbe polled, then
  ! MPI_Imrecv + MPI_Wait.
  subroutine matched_probe()
    integer, asynchronous :: out(maxn), in(maxn)
    integer :: count, i
    type(MPI_Request) :: req, rreq
    type(MPI_Status) :: st
    type(MPI_Message) :: msg
    logical :: flag
    out = [(rank + 7 * i, i = 1, maxn)]
    in = -1
    call MPI_Isend(out, 3, MPI_INTEGER, right, 70, comm, req)
    call MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, msg, st, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Mprobe ierror')
    call check(msg /= MPI_MESSAGE_NULL, 'MPI_Mprobe: MPI_MESSAGE_NULL returned')
    call check_int(st%MPI_SOURCE, left, 'MPI_Mprobe: status%MPI_SOURCE')
    call check_int(st%MPI_TAG, 70, 'MPI_Mprobe: status%MPI_TAG')
    call MPI_Get_count(st, MPI_INTEGER, count)
    call check_int(count, 3, 'MPI_Mprobe: MPI_Get_count')
    call MPI_Mrecv(in, count, MPI_INTEGER, msg, st, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Mrecv ierror')
    call check(msg == MPI_MESSAGE_NULL, 'MPI_Mrecv: message not MPI_MESSAGE_NULL')
    call check_int(st%MPI_SOURCE, left, 'MPI_Mrecv: status%MPI_SOURCE')
    call check(all(in(1:3) == [(left + 7 * i, i = 1, 3)]) .and. in(4) == -1, &
               'MPI_Mrecv: received data')
    call MPI_Wait(req, MPI_STATUS_IGNORE)

    in = -1
    call MPI_Isend(out, 4, MPI_INTEGER, right, 71, comm, req)
    flag = .false.
    do while (.not. flag)
      call MPI_Improbe(left, 71, comm, flag, msg, st, ierr)
      call check_int(ierr, MPI_SUCCESS, 'MPI_Improbe ierror')
    end do
    call MPI_Get_count(st, MPI_INTEGER, count)
    call check_int(count, 4, 'MPI_Improbe: MPI_Get_count')
    call MPI_Imrecv(in, count, MPI_INTEGER, msg, rreq, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Imrecv ierror')
    call check(msg == MPI_MESSAGE_NULL, 'MPI_Imrecv: message not MPI_MESSAGE_NULL')
    call MPI_Wait(rreq, st)
    call check_int(st%MPI_TAG, 71, 'MPI_Imrecv: status%MPI_TAG')
    call check(all(in(1:4) == [(left + 7 * i, i = 1, 4)]), 'MPI_Imrecv: received data')
    call MPI_Wait(req, MPI_STATUS_IGNORE)
  end subroutine matched_probe

  ! Persistent requests started four times (MPI_Start and MPI_Startall in
  ! turn): inactive but not null after each MPI_Wait / MPI_Waitall, null only
  ! after MPI_Request_free.
  subroutine persistent()
    integer, asynchronous :: out(2), in(2)
    type(MPI_Request) :: reqs(2)
    type(MPI_Status) :: stats(2)
    integer :: round
    call MPI_Recv_init(in, 2, MPI_INTEGER, left, 80, comm, reqs(1), ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Recv_init ierror')
    call MPI_Send_init(out, 2, MPI_INTEGER, right, 80, comm, reqs(2))
    call check(reqs(1) /= MPI_REQUEST_NULL .and. reqs(2) /= MPI_REQUEST_NULL, &
               'persistent requests are MPI_REQUEST_NULL')
    do round = 1, 4
      out = [rank, round]
      in = -1
      if (mod(round, 2) == 1) then
        call MPI_Startall(2, reqs, ierr)
        call check_int(ierr, MPI_SUCCESS, 'MPI_Startall ierror')
        call MPI_Waitall(2, reqs, stats)
        call check_int(stats(1)%MPI_SOURCE, left, 'persistent receive: status%MPI_SOURCE')
      else
        call MPI_Start(reqs(1), ierr)
        call check_int(ierr, MPI_SUCCESS, 'MPI_Start ierror')
        call MPI_Start(reqs(2))
        call MPI_Wait(reqs(2), MPI_STATUS_IGNORE)
        call MPI_Wait(reqs(1), stats(1))
        call check_int(stats(1)%MPI_TAG, 80, 'persistent receive: status%MPI_TAG')
      end if
      call check(all(in == [left, round]), 'persistent receive: data')
      call check(reqs(1) /= MPI_REQUEST_NULL .and. reqs(2) /= MPI_REQUEST_NULL, &
                 'completed persistent request became MPI_REQUEST_NULL')
    end do
    call MPI_Request_free(reqs(1), ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Request_free ierror')
    call MPI_Request_free(reqs(2))
    call check(reqs(1) == MPI_REQUEST_NULL .and. reqs(2) == MPI_REQUEST_NULL, &
               'MPI_Request_free: request not MPI_REQUEST_NULL')
  end subroutine persistent

  ! MPI_PROC_NULL: sends succeed at once, receives leave the buffer alone and
  ! give source MPI_PROC_NULL, tag MPI_ANY_TAG, count 0; a matched probe
  ! gives MPI_MESSAGE_NO_PROC, which MPI_Mrecv turns into MPI_MESSAGE_NULL.
  subroutine proc_null()
    integer, asynchronous :: buf(2)
    integer :: in(2), count
    type(MPI_Request) :: req
    type(MPI_Status) :: st
    type(MPI_Message) :: msg
    buf = [5, 6]
    call MPI_Send(buf, 2, MPI_INTEGER, MPI_PROC_NULL, 1, comm, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Send to MPI_PROC_NULL ierror')
    call MPI_Recv(buf, 2, MPI_INTEGER, MPI_PROC_NULL, 1, comm, st, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Recv from MPI_PROC_NULL ierror')
    call check_int(st%MPI_SOURCE, MPI_PROC_NULL, 'MPI_PROC_NULL: status%MPI_SOURCE')
    call check_int(st%MPI_TAG, MPI_ANY_TAG, 'MPI_PROC_NULL: status%MPI_TAG')
    call MPI_Get_count(st, MPI_INTEGER, count)
    call check_int(count, 0, 'MPI_PROC_NULL: MPI_Get_count')
    call check(all(buf == [5, 6]), 'MPI_PROC_NULL: receive buffer changed')
    call MPI_Irecv(buf, 2, MPI_INTEGER, MPI_PROC_NULL, 2, comm, req)
    call MPI_Wait(req, st)
    call check_int(st%MPI_SOURCE, MPI_PROC_NULL, 'MPI_Irecv MPI_PROC_NULL: MPI_SOURCE')
    call check(req == MPI_REQUEST_NULL, 'MPI_PROC_NULL: request not null after MPI_Wait')
    call MPI_Isend(buf, 2, MPI_INTEGER, MPI_PROC_NULL, 2, comm, req)
    call MPI_Wait(req, MPI_STATUS_IGNORE)
    call check(req == MPI_REQUEST_NULL, 'MPI_Isend MPI_PROC_NULL: request not null')
    call MPI_Mprobe(MPI_PROC_NULL, 3, comm, msg, st)
    call check(msg == MPI_MESSAGE_NO_PROC, 'MPI_Mprobe(MPI_PROC_NULL): MPI_MESSAGE_NO_PROC')
    call check_int(st%MPI_SOURCE, MPI_PROC_NULL, 'MPI_Mprobe(MPI_PROC_NULL): MPI_SOURCE')
    call MPI_Mrecv(buf, 2, MPI_INTEGER, msg, st)
    call check(msg == MPI_MESSAGE_NULL, 'MPI_Mrecv(MPI_MESSAGE_NO_PROC): message not null')
    call check(all(buf == [5, 6]), 'MPI_Mrecv(MPI_MESSAGE_NO_PROC): buffer changed')
    in = [7, 8]
    call MPI_Sendrecv(buf, 2, MPI_INTEGER, MPI_PROC_NULL, 4, in, 2, MPI_INTEGER, &
                      MPI_PROC_NULL, 4, comm, st)
    call check_int(st%MPI_SOURCE, MPI_PROC_NULL, 'MPI_Sendrecv(MPI_PROC_NULL): MPI_SOURCE')
    call check(all(in == [7, 8]), 'MPI_Sendrecv(MPI_PROC_NULL): receive buffer changed')
  end subroutine proc_null

  ! MPI 4.0: MPI_Isendrecv and MPI_Isendrecv_replace around the ring.
  subroutine isendrecv()
    integer, asynchronous :: out(2), in(3), buf(2)
    integer :: count
    type(MPI_Request) :: req
    type(MPI_Status) :: st
    out = [rank, -rank]
    in = -1
    call MPI_Isendrecv(out, 2, MPI_INTEGER, right, 90, in, 3, MPI_INTEGER, MPI_ANY_SOURCE, &
                       MPI_ANY_TAG, comm, req, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Isendrecv ierror')
    call MPI_Wait(req, st)
    call check(req == MPI_REQUEST_NULL, 'MPI_Isendrecv: request not null after MPI_Wait')
    call check_int(st%MPI_SOURCE, left, 'MPI_Isendrecv: status%MPI_SOURCE')
    call check_int(st%MPI_TAG, 90, 'MPI_Isendrecv: status%MPI_TAG')
    call MPI_Get_count(st, MPI_INTEGER, count)
    call check_int(count, 2, 'MPI_Isendrecv: MPI_Get_count')
    call check(all(in == [left, -left, -1]), 'MPI_Isendrecv: received data')
    buf = [rank, 100 + rank]
    call MPI_Isendrecv_replace(buf, 2, MPI_INTEGER, right, 91, left, 91, comm, req)
    call MPI_Wait(req, st, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Isendrecv_replace: MPI_Wait ierror')
    call check_int(st%MPI_SOURCE, left, 'MPI_Isendrecv_replace: status%MPI_SOURCE')
    call check(all(buf == [left, 100 + left]), 'MPI_Isendrecv_replace: data')
  end subroutine isendrecv

  ! Large counts: MPI_Sendrecv, MPI_Get_count and MPI_Allreduce with
  ! INTEGER(KIND=MPI_COUNT_KIND) counts resolve to their _c forms (MPI 4.0
  ! section 19.2); MPI_Type_get_extent_c has only its own name here, since
  ! MPI_ADDRESS_KIND and MPI_COUNT_KIND are one kind.
  subroutine large_counts()
    integer(kind=MPI_COUNT_KIND) :: n, got, lb, extent
    integer :: out(4), in(4), i
    type(MPI_Status) :: st
    n = 4
    out = [(rank * 10 + i, i = 1, 4)]
    in = -1
    call MPI_Sendrecv(out, n, MPI_INTEGER, right, 90, in, n, MPI_INTEGER, left, 90, comm, st, &
                      ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Sendrecv (large count) ierror')
    call check(all(in == [(left * 10 + i, i = 1, 4)]), 'MPI_Sendrecv (large count): data')
    got = -1
    call MPI_Get_count(st, MPI_INTEGER, got)
    call check(got == 4_MPI_COUNT_KIND, 'MPI_Get_count (large count): count')
    call MPI_Allreduce(out, in, n, MPI_INTEGER, MPI_SUM, comm)
    do i = 1, 4
      call check_int(in(i), 10 * (nprocs * (nprocs - 1) / 2) + i * nprocs, &
                     'MPI_Allreduce (large count): sum')
    end do
    call MPI_Type_get_extent_c(MPI_INTEGER, lb, extent, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Type_get_extent_c ierror')
    call check(lb == 0 .and. extent == 4, 'MPI_Type_get_extent_c: lb and extent of MPI_INTEGER')
  end subroutine large_counts

end program f08_p2p
