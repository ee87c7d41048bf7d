#include "transport/line_writer.hpp"

#include "actors/core/handlers.hpp"

namespace parley {

line_writer_actor::behavior_type line_writer(line_writer_actor::stateful_pointer<line_writer_state> self,
                                             std::shared_ptr<fd_writer> out) {
  install_default_handlers(self, "line_writer");
  self->state.out = std::move(out);
  return {
      [self](std::string& line) {
        line += '\n';
        self->state.out->push(std::move(line));
      },
      [self](std::string& line, std::shared_ptr<const void>& credit) {
        line += '\n';
        self->state.out->push(std::move(line));
        credit.reset();  // counted in the queue from here
      },
      [](atom::flush) {},
      [self](atom::close) {
        self->state.out->finish(false);
        self->quit();
        return atom::ok::value;
      },
  };
}

}  // namespace parley
